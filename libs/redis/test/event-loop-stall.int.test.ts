// A process whose event loop is blocked for longer than a command timeout (a handler's synchronous work,
// a long garbage collection) must not take Redis for gone: the replies that came meanwhile are read. A
// Redis that really stops answering still times out. The stores built on @warren/redis (in-flight,
// schedules, event log) each have a test of their own client; this one holds the helper to it.
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { FaultProxy, Teardown, outcomesAcrossStalls, redisUrl, uniqueName } from '@warren/testkit';
import { createRedis, stallTolerantTimeouts } from '../src/index';

const td = new Teardown();
afterAll(() => td.run());
const key = `${uniqueName('redis-stall')}:k`;

async function ready(redis: Redis): Promise<Redis> {
  td.add(() => redis.disconnect());
  if (redis.status !== 'ready') await once(redis, 'ready');
  return redis;
}

it('answers commands, pipelines and transactions whose replies came while the event loop was blocked past the timeout', async () => {
  const redis = await ready(createRedis(redisUrl(), { commandTimeoutMs: 200, maxRetriesPerRequest: 0 }));
  const single = await outcomesAcrossStalls((i) => redis.set(key, String(i), 'PX', 10_000), { rounds: 6, blockMs: 400 });
  const pipelined = await outcomesAcrossStalls(() => redis.pipeline().get(key).pttl(key).exec(), { rounds: 3, blockMs: 400 });
  const transaction = await outcomesAcrossStalls(() => redis.multi().get(key).pexpire(key, 10_000).exec(), { rounds: 3, blockMs: 400 });
  expect({ single, pipelined, transaction }).toEqual({ single: Array(6).fill('ok'), pipelined: Array(3).fill('ok'), transaction: Array(3).fill('ok') });
  await redis.del(key);
});

it("is what ioredis's own commandTimeout is not: the same blocks fail its commands", async () => {
  // The control: without it the test above would pass on any client.
  const redis = await ready(new Redis(redisUrl(), { commandTimeout: 200, maxRetriesPerRequest: 0 }));
  const outcomes = await outcomesAcrossStalls((i) => redis.set(key, String(i), 'PX', 10_000), { rounds: 6, blockMs: 400 });
  expect(outcomes).toEqual(Array(6).fill('Command timed out'));
  await redis.del(key);
});

it('still fails a command Redis does not answer, about the timeout later', async () => {
  const proxy = await FaultProxy.forUrl(redisUrl());
  td.add(() => proxy.close());
  const redis = await ready(new Redis(proxy.url(redisUrl()), { maxRetriesPerRequest: 0 }));
  stallTolerantTimeouts(redis, 200);
  proxy.stall();
  const started = Date.now();
  await expect(redis.ping()).rejects.toThrow('Command timed out');
  await expect(redis.multi().ping().exec()).rejects.toThrow('Command timed out');
  expect(Date.now() - started).toBeLessThan(4000);
  proxy.resume();
});
