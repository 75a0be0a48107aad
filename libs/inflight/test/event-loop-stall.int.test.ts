// A worker whose event loop is blocked for longer than the tracker's command timeout (a handler's
// synchronous work, a long garbage collection) must not take Redis for gone: the replies that came
// meanwhile are read, the calls stay tracked. A Redis that really stops answering still times out.
import { startService, type RpcClient } from '@warren/amqp';
import { FaultProxy, amqpUrl, blockEventLoop, outcomesAcrossStalls, redisUrl, waitFor } from '@warren/testkit';
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

it('answers a command whose reply came while the event loop was blocked past the timeout', async () => {
  // No auto-pipelining, as a worker's tracker: the command is written before the block.
  const { client: redis } = openRedis(redisUrl(), 200, false);
  td.add(() => closeRedis(redis));
  await ready(redis);
  const outcomes = await outcomesAcrossStalls((i) => redis.set(`${tp.prefix}:stall`, String(i), 'PX', 10_000), { rounds: 6, blockMs: 400 });
  // ioredis's own commandTimeout fails every one of these (libs/redis/test/event-loop-stall.int.test.ts).
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
          blockEventLoop(500);
          return 'done';
        },
      },
    },
  });
  td.add(() => service.close());
  const calls = Array.from({ length: 4 }, () => startCall<string>(client, 'busy', [], { timeoutMs: 20_000 }));
  await expect(Promise.all(calls.map((c) => c.answer))).resolves.toEqual(['done', 'done', 'done', 'done']);
  // A first delivery runs without waiting for its claim's reply (awaitClaim 'redeliveries'), and `tracked`
  // counts a claim when that reply is read, `untracked` when it failed: the answers may reach this caller
  // (the same process) before the worker has read the reply, so the counts are read once all four are in
  // (or 10 s have passed: the assertion then says what is missing).
  await waitFor(() => tracker.health().tracked + tracker.health().untracked >= 4, { timeoutMs: 10_000 }).catch(() => undefined);
  const health = tracker.health();
  expect({ state: health.state, degradedTransitions: health.degradedTransitions, untracked: health.untracked, tracked: health.tracked }).toEqual({ state: 'tracking', degradedTransitions: 0, untracked: 0, tracked: 4 });
}, 30_000);
