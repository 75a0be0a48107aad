/**
 * The in-flight tracker alone, against the real Redis:  npm run bench:tracker -- [--calls N] [--concurrency C]
 *
 * `--no-history` runs it without the outcome history (TrackerOptions.history: false), to see what the
 * finish script's history entry costs.
 *
 * `--first-delivery` runs each call as a first delivery (`firstDelivery: true`), the path most calls of
 * a service take: its claim is written and the run starts without waiting for the claim's reply.
 * Without it, each call waits for its claim's reply first, as a redelivery does.
 *
 * `concurrency` loops each run a call's tracking life (claim, finish, release) with no AMQP and no
 * handler, so the figures are the tracker's own cost per call: this process's CPU (the tracker's
 * JavaScript and ioredis) and redis-server's (the scripts). The RPC bench's "warren+tracking" row
 * shows the same cost inside a whole call, where it shares two cores with everything else.
 */
import { randomBytes } from 'node:crypto';
import type { Executed, RunningCall } from '@warren/calls';
import { createRedisTracker } from '@warren/inflight';
import { cpuSampler } from './proc-stats';
import { redisUrl } from '@warren/testkit';

const REDIS_URL = redisUrl();

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

async function main(): Promise<void> {
  const calls = option('--calls', 50_000);
  const concurrency = option('--concurrency', 64);
  const prefix = `bench-tracker-${randomBytes(4).toString('hex')}`;
  const history = process.argv.includes('--no-history') ? { history: false as const } : {};
  const firstDelivery = process.argv.includes('--first-delivery');
  const tracker = createRedisTracker({ redis: REDIS_URL, keyPrefix: prefix, ...history });
  await tracker.start({ service: 'bench', instanceId: 'i1', running: () => 0 });
  const abort = { signal: new AbortController().signal, abort: (): void => undefined };
  const traceId = randomBytes(16).toString('hex');
  let next = 0;
  const run = async (total: number): Promise<void> => {
    while (next < total) {
      const n = next++;
      // Small params and a trace id, as a real call has: both ride in the claim's record (call detail).
      const call: RunningCall = { callId: `${prefix}.${n}`, id: n, method: 'add', service: 'bench', worker: 'i1', attempt: 1, firstDelivery, deadline: Date.now() + 10_000, startedAt: Date.now(), params: { a: n, b: 2 }, traceId };
      const response = { jsonrpc: '2.0', result: n + 1, id: n } as const;
      const executed: Executed = { kind: 'answer', text: JSON.stringify(response), response };
      const outcome = await tracker.run(call, abort, () => Promise.resolve(executed));
      if (outcome.source !== 'run') throw new Error(`call ${n}: expected to run, got an answer from the store`);
      await outcome.stored;
    }
  };
  const loops = (total: number): Promise<void[]> => Promise.all(Array.from({ length: concurrency }, () => run(total)));
  try {
    await loops(Math.min(10_000, calls)); // warm-up: JIT, connection, script cache
    const measuredFrom = next;
    const redis = cpuSampler('redis-server');
    const redis0 = redis?.();
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await loops(measuredFrom + calls);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const result = {
      calls,
      concurrency,
      firstDelivery,
      callsPerSec: Math.round(calls / seconds),
      trackerCpuUsPerCall: Number(((cpu.user + cpu.system) / calls).toFixed(1)),
      redisCpuUsPerCall: redis && redis0 !== undefined ? Number(((redis() - redis0) / calls).toFixed(1)) : null,
    };
    console.log(JSON.stringify(result));
  } finally {
    await tracker.close();
    // Every record has a TTL; deleting them now just leaves Redis as it was found.
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    const stream = redis.scanStream({ match: `${prefix}:*`, count: 1000 });
    for await (const batch of stream) if ((batch as string[]).length > 0) await redis.unlink(...(batch as string[]));
    await redis.quit();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
