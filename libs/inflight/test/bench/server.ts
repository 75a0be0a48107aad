/**
 * Warren "add" service for the tracking bench (child process), the same as
 * bench/warren-server.ts but with @warren/inflight wired in:
 *
 *   node --import tsx libs/inflight/test/bench/server.ts <namespace> plain|tracking [keyPrefix]
 *
 * stdout protocol of bench/amqp-baseline-server.ts: `ready`, and `cpu <us>` for each `cpu` line on stdin.
 */
import { createInterface } from 'node:readline';
import { startService } from '@warren/amqp';
import { amqpUrl, redisUrl } from '@warren/testkit';
import { createRedisTracker } from '../../src';

async function main(): Promise<void> {
  const [namespace, mode, keyPrefix] = process.argv.slice(2);
  if (!namespace || (mode !== 'plain' && mode !== 'tracking')) throw new Error('usage: server.ts <namespace> plain|tracking [keyPrefix]');
  const tracker = mode === 'tracking' ? createRedisTracker({ redis: redisUrl(), keyPrefix: keyPrefix ?? namespace }) : undefined;
  const service = await startService({
    urls: amqpUrl(),
    namespace,
    name: 'bench',
    prefetch: 64,
    durable: false,
    ...(tracker ? { tracker } : {}),
    methods: { add: { params: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, handler: (p) => (p as number[])[0]! + (p as number[])[1]! } },
  });
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'cpu') {
      const u = process.cpuUsage();
      process.stdout.write(`cpu ${u.user + u.system}\n`);
    }
    if (line === 'health') process.stdout.write(`health ${JSON.stringify(tracker?.health() ?? null)}\n`);
  });
  const stop = async (): Promise<void> => {
    await service.close();
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
