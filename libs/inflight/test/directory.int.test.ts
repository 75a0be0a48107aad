// The method directory in Redis: what services record, what callers read back.
import { Redis } from 'ioredis';
import { RedisDirectory, parseEntry as parseDirectoryEntry } from '../src/directory';
import { InflightUnavailableError } from '../src/errors';
import { redisUrl, uniqueName } from '@warren/testkit';

const prefix = uniqueName('dir').replace(/[^A-Za-z0-9_.:-]/g, '');
const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
const directory = new RedisDirectory({ redis: redisUrl(), keyPrefix: prefix });

afterAll(async () => {
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await directory.close();
  redis.disconnect();
});

it('records each method under <prefix>:method:<method> with a week-long TTL, and looks it up', async () => {
  await directory.record('calculator', [{ name: 'add', jobStyle: false }, { name: 'report.render', jobStyle: true }]);
  await expect(directory.lookup('add')).resolves.toEqual({ service: 'calculator', jobStyle: false });
  await expect(directory.lookup('report.render')).resolves.toEqual({ service: 'calculator', jobStyle: true });
  await expect(directory.lookup('never.recorded')).resolves.toBeUndefined();
  expect(JSON.parse((await redis.get(`${prefix}:method:add`)) ?? 'null')).toMatchObject({ v: 1, service: 'calculator', jobStyle: false });
  expect(await redis.pttl(`${prefix}:method:add`)).toBeGreaterThan(6 * 24 * 3_600_000);
});

it('lets the later record win when a method moves to another service', async () => {
  await directory.record('calculator', [{ name: 'moved', jobStyle: false }]);
  await directory.record('maths', [{ name: 'moved', jobStyle: false }]);
  await expect(directory.lookup('moved')).resolves.toEqual({ service: 'maths', jobStyle: false });
});

it('reads an entry another writer made that does not fit as no entry', async () => {
  for (const bad of ['not json', '[]', '{"service":7}', '{"service":"has space"}', 'null']) {
    await redis.set(`${prefix}:method:bad`, bad);
    await expect(directory.lookup('bad')).resolves.toBeUndefined();
  }
  expect(parseDirectoryEntry('{"service":"py-svc"}')).toEqual({ service: 'py-svc', jobStyle: false });
});

it('rejects with InflightUnavailableError, promptly, when Redis cannot be reached', async () => {
  const away = new RedisDirectory({ redis: 'redis://127.0.0.1:1', keyPrefix: prefix, commandTimeoutMs: 200 });
  try {
    const started = Date.now();
    await expect(away.lookup('add')).rejects.toBeInstanceOf(InflightUnavailableError);
    await expect(away.record('calculator', [{ name: 'add', jobStyle: false }])).rejects.toBeInstanceOf(InflightUnavailableError);
    expect(Date.now() - started).toBeLessThan(5000);
  } finally {
    await away.close();
  }
});
