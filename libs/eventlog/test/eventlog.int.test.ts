import { Redis } from 'ioredis';
import { Teardown, redisUrl, uniqueName } from '@warren/testkit';
import { RedisEventLog } from '../src/index';
import { deleteRedisKeys } from '../../../test/integration/helpers';

const td = new Teardown();
const prefix = uniqueName('evl');
let redis: Redis;

beforeAll(() => {
  redis = new Redis(redisUrl());
  td.add(() => redis.disconnect());
  td.add(() => deleteRedisKeys(`${prefix}:`));
});
afterAll(() => td.run());

function log(options: { maxEntries?: number; ttlMs?: number } = {}): RedisEventLog {
  const l = new RedisEventLog({ url: redisUrl(), keyPrefix: prefix, ...options });
  td.add(() => l.close());
  return l;
}

it('appends newest first, caps the list and sets a TTL on every append', async () => {
  const l = log({ maxEntries: 3, ttlMs: 60_000 });
  for (let i = 0; i < 5; i++) await l.append('s1', { i });
  expect(await l.recent('s1', 10)).toEqual([{ i: 4 }, { i: 3 }, { i: 2 }]);
  expect(await redis.llen(`${prefix}:eventlog:s1`)).toBe(3);
  const ttl = await redis.pttl(`${prefix}:eventlog:s1`);
  expect(ttl).toBeGreaterThan(50_000);
  expect(ttl).toBeLessThanOrEqual(60_000);
});

it('stores records with a TTL and skips entries that are not JSON', async () => {
  const l = log();
  await l.put('r1', { step: 2 }, 5000);
  expect(await l.get('r1')).toEqual({ step: 2 });
  expect(await redis.pttl(`${prefix}:record:r1`)).toBeGreaterThan(0);
  expect(await l.get('missing')).toBeUndefined();
  await redis.lpush(`${prefix}:eventlog:s2`, 'not json', '"ok"');
  expect(await l.recent('s2', 10)).toEqual(['ok']);
});

it('fails an operation within its command timeout when Redis does not answer, instead of hanging', async () => {
  const l = new RedisEventLog({ url: 'redis://127.0.0.1:1', keyPrefix: prefix, commandTimeoutMs: 300 });
  td.add(() => l.close());
  const t0 = Date.now();
  await expect(l.append('s3', 1)).rejects.toBeInstanceOf(Error);
  expect(Date.now() - t0).toBeLessThan(3000);
});
