// A worker whose event loop is blocked for longer than the tracker's command timeout (a handler's
// synchronous work, a long garbage collection) must not take Redis for gone: the replies that came
// meanwhile are read, the calls stay tracked. A Redis that really stops answering still times out.
import { startService, type RpcClient } from '@warren/amqp';
import { FaultProxy, amqpUrl, redisUrl } from '@warren/testkit';
import { once } from 'node:events';
import { closeRedis, openRedis, type RedisClient } from '../src/redis-connection';
import { createRedisTracker } from '../src/redis-tracker';
import { TestBed, startCall } from './support';

const bed = new TestBed();
const { td, ns, tp } = bed;
let client: RpcClient;

beforeAll(async () => {
  ({ client } = await bed.start());
});
afterAll(() => bed.close());

/** The store's client queues nothing while it connects (enableOfflineQueue: false). */
async function ready(redis: RedisClient): Promise<void> {
  if (redis.status !== 'ready') await once(redis, 'ready');
}

/** Keeps the event loop busy for `ms`, as a CPU-bound handler does. */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

it('answers a command whose reply came while the event loop was blocked past the timeout', async () => {
  // No auto-pipelining, as a worker's tracker: the command is written before the block.
  const { client: redis } = openRedis(redisUrl(), 200, false);
  td.add(() => closeRedis(redis));
  await ready(redis);
  const outcomes: string[] = [];
  for (let i = 0; i < 6; i++) {
    const sent = redis.set(`${tp.prefix}:stall`, String(i), 'PX', 10_000).then(() => 'ok', (err: Error) => err.message);
    block(400);
    outcomes.push(await sent);
  }
  // ioredis's own commandTimeout failed about half of these here.
  expect(outcomes).toEqual(Array(6).fill('ok'));
});

it('still fails a command Redis does not answer, about the timeout later', async () => {
  const proxy = await FaultProxy.forUrl(redisUrl());
  td.add(() => proxy.close());
  const { client: redis } = openRedis(proxy.url(redisUrl()), 200);
  td.add(() => closeRedis(redis));
  await ready(redis);
  proxy.stall();
  const started = Date.now();
  await expect(redis.ping()).rejects.toThrow('Command timed out');
  expect(Date.now() - started).toBeLessThan(2000);
  proxy.resume();
});

it('keeps tracking through handlers that block the event loop for longer than the command timeout', async () => {
  const tracker = createRedisTracker({ redis: redisUrl(), keyPrefix: tp.prefix, commandTimeoutMs: 200, leaseMs: 5000, heartbeatMs: 100 });
  const service = await startService({
    urls: amqpUrl(),
    namespace: ns.namespace,
    name: ns.service('stall'),
    prefetch: 4,
    tracker,
    methods: {
      busy: {
        handler: () => {
          // The claim's reply and the lease renewals arrive while this runs.
          block(500);
          return 'done';
        },
      },
    },
  });
  td.add(() => service.close());
  const calls = Array.from({ length: 4 }, () => startCall<string>(client, 'busy', [], { timeoutMs: 20_000 }));
  await expect(Promise.all(calls.map((c) => c.answer))).resolves.toEqual(['done', 'done', 'done', 'done']);
  const health = tracker.health();
  expect({ state: health.state, degradedTransitions: health.degradedTransitions, untracked: health.untracked, tracked: health.tracked }).toEqual({ state: 'tracking', degradedTransitions: 0, untracked: 0, tracked: 4 });
}, 30_000);
