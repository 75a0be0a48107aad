/**
 * Warren "add" service for the benchmark (child process).
 *
 *   node --import tsx bench/warren-server.ts <namespace> [tracking|tracking-await]
 *
 * Same stdout protocol as amqp-baseline-server.ts: `ready`, and `cpu <us>` per `cpu` line on stdin.
 * With `tracking`, calls are tracked in Redis through @warren/inflight.
 */
import { createInterface } from 'node:readline';
import { startService, type CallTracker } from '@warren/amqp';
import { benchTracker } from './warren-tracking';
import { amqpUrl } from '@warren/testkit';

const AMQP_URL = amqpUrl();

async function main(): Promise<void> {
  const [namespace, mode] = process.argv.slice(2);
  if (!namespace) throw new Error('usage: warren-server.ts <namespace> [tracking|tracking-await]');
  const tracking = mode === 'tracking' || mode === 'tracking-await' ? await benchTracker(namespace, mode === 'tracking-await') : undefined;
  const tracker: CallTracker | undefined = tracking?.tracker;
  const service = await startService({
    urls: AMQP_URL,
    namespace,
    name: 'bench',
    // The bench's `--prefetch` (rpc-bench.ts), the same for every target's service.
    prefetch: Number(process.env['BENCH_PREFETCH'] ?? 64),
    durable: false,
    ...(tracker ? { tracker } : {}),
    methods: { add: { params: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, handler: (p) => (p as number[])[0]! + (p as number[])[1]! } },
  });
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'cpu') {
      const u = process.cpuUsage();
      process.stdout.write(`cpu ${u.user + u.system}\n`);
    }
  });
  const stop = async (): Promise<void> => {
    await service.close();
    await tracking?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdout.write('ready\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
