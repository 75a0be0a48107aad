/**
 * One budget service in a process of its own (rig.ts starts two: untracked and tracked), so its
 * system calls can be counted apart (strace.ts) as its AMQP and Redis work is (its proxies: AMQP_URL,
 * REDIS_URL).
 *
 *   node --import tsx test/budget/service-child.ts <namespace> <service> <method> untracked|tracked
 *
 * Prints `ready` once consuming; closes the service (and its tracker) when stdin ends or on SIGTERM.
 */
import { startService } from '@warren/amqp';
import { createRedisTracker } from '@warren/inflight';
import { amqpUrl, redisUrl } from '@warren/testkit';

async function main(): Promise<void> {
  const [namespace, name, method, tracking] = process.argv.slice(2);
  if (namespace === undefined || name === undefined || method === undefined || (tracking !== 'untracked' && tracking !== 'tracked')) {
    throw new Error('usage: service-child.ts <namespace> <service> <method> untracked|tracked');
  }
  const tracker = tracking === 'tracked' ? createRedisTracker({ redis: redisUrl(), keyPrefix: namespace }) : undefined;
  const service = await startService({
    urls: amqpUrl(),
    namespace,
    name,
    durable: false,
    ...(tracker === undefined ? {} : { tracker }),
    methods: { [method]: { params: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, handler: (p) => (p as number[])[0]! + (p as number[])[1]! } },
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= (async () => {
    await service.close();
    await tracker?.close();
    process.exit(0);
  })());
  process.on('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
  process.stdout.write('ready\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`service-child: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
