// Fanout with the real subscriber processes: `audit` (two instances) and
// `notifier` (the same program under another SERVICE_NAME). Each service gets
// every notification once; its instances share the work; each records what it
// got in Redis and answers `<service>.recent`.
import { connectClient, type RpcClient } from '@warren/amqp';
import { RedisEventLog } from '@warren/eventlog';
import type { Params } from '@warren/jsonrpc';
import { Teardown, amqpUrl, redisUrl, waitFor } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, startServiceProcess } from '../../../test/integration/helpers';
import type { AuditEntry } from '../src/methods';

const td = new Teardown();
const ns = new TestNamespace();
let client: RpcClient;

const sent: [string, Params][] = [
  ['logMessage', ['User logged in']],
  ['notifyEvent', ['EventData']],
  ['update', [1, 2, 3, 4, 5]],
  ['notify_hello', [7]],
  ['notify_sum', [1, 2, 4]],
];

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  const env = { WARREN_NAMESPACE: ns.namespace, AUDIT_TTL_MS: '600000' };
  await Promise.all([
    startServiceProcess(td, 'audit', { ...env, SERVICE_NAME: ns.service('audit'), INSTANCE_ID: 'audit-1' }),
    startServiceProcess(td, 'audit', { ...env, SERVICE_NAME: ns.service('audit'), INSTANCE_ID: 'audit-2' }),
    startServiceProcess(td, 'audit', { ...env, SERVICE_NAME: ns.service('notifier'), INSTANCE_ID: 'notifier-1' }),
  ]);
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
}, 60_000);
afterAll(() => td.run());

const recent = (service: string, params: Params = { limit: 100 }): Promise<AuditEntry[]> => client.call<AuditEntry[]>(`${service}.recent`, params);

it('gives every subscribing service every notification, once per service however many instances it has', async () => {
  for (const [method, params] of sent) await client.notify(method, params);
  for (let i = 0; i < 20; i++) await client.notify('notify_sum', [i]);
  await waitFor(async () => (await recent('audit')).length >= 25 && (await recent('notifier')).length >= 25, { timeoutMs: 10_000 });
  const audit = await recent('audit');
  const notifier = await recent('notifier');
  expect(audit).toHaveLength(25);
  expect(notifier).toHaveLength(25);
  const key = (e: AuditEntry): string => `${e.method} ${JSON.stringify(e.params)}`;
  expect(audit.map(key).sort()).toEqual(notifier.map(key).sort());
  for (const [method, params] of sent) expect(audit.find((e) => e.method === method && JSON.stringify(e.params) === JSON.stringify(params))).toBeDefined();
  expect(new Set(audit.map((e) => e.service))).toEqual(new Set(['audit']));
  expect(new Set(notifier.map((e) => e.service))).toEqual(new Set(['notifier']));
  // The two audit instances share one queue: both took part (round-robin), neither saw everything.
  const byInstance = new Set(audit.map((e) => e.instanceId));
  expect(byInstance).toEqual(new Set(['audit-1', 'audit-2']));
});

it('keeps the record in Redis, capped and with a TTL, where operators can read it without the service', async () => {
  const log = new RedisEventLog({ url: redisUrl(), keyPrefix: ns.namespace });
  td.add(() => log.close());
  const entries = (await log.recent(`${ns.namespace}.audit`, 1000)) as unknown as AuditEntry[];
  expect(entries.length).toBeGreaterThanOrEqual(25);
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl());
  td.add(() => redis.disconnect());
  const ttl = await redis.pttl(`${ns.namespace}:eventlog:${ns.namespace}.audit`);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(600_000);
});

it('answers queries by notification name', async () => {
  const hellos = await recent('notifier', { method: 'notify_hello' });
  expect(hellos.map((e) => e.params)).toEqual([[7]]);
  await expect(recent('audit', [2])).resolves.toHaveLength(2);
});

it('drops a notification with params its schema refuses, and keeps serving', async () => {
  const before = (await recent('notifier')).length;
  await client.notify('notify_sum', ['not', 'numbers']);
  await client.notify('notify_hello', ['after']);
  await waitFor(async () => (await recent('notifier', { method: 'notify_hello' })).length === 2);
  expect((await recent('notifier')).length).toBe(before + 1);
});
