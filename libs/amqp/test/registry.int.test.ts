// The registry against the real RabbitMQ: it asks instances to announce on
// start, drops what does not fit the schema and says so once per sender.
import { createLogger } from '@warren/logger';
import { Teardown, amqpUrl, waitFor } from '@warren/testkit';
import { TestNamespace, publishRaw } from '../../../test/support/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { ServiceRegistry, startService } from '../src';

const td = new Teardown();
const ns = new TestNamespace();
afterAll(() => td.run());

async function registry(logger?: ReturnType<typeof createLogger>): Promise<ServiceRegistry> {
  const connection = new AmqpConnection({ urls: amqpUrl() });
  await connection.start();
  td.add(() => connection.close());
  const r = await ServiceRegistry.start(connection, { namespace: ns.namespace, ...(logger ? { logger } : {}) });
  td.add(() => r.close());
  return r;
}

beforeAll(() => td.add(() => ns.destroy()));

it('hears instances that started before it, once its first round is over', async () => {
  const service = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: ns.service('early'), announceIntervalMs: 3_600_000, methods: { 'early.ping': { handler: () => 'pong' } } });
  td.add(() => service.close());
  const r = await registry();
  await r.discovered();
  expect(r.discoveryComplete).toBe(true);
  expect(r.list().map((i) => [i.service, i.instanceId, i.v])).toEqual([[ns.service('early'), service.instanceId, 1]]);
  await service.close();
  await waitFor(() => r.list().length === 0, { message: 'the withdrawal heard' });
});

it('logs a sender of announcements that do not fit once, however often it sends them', async () => {
  const lines: { msg: string; sender?: string; reason?: string }[] = [];
  const logger = createLogger({ level: 'warn', destination: { write: (s: string) => void lines.push(JSON.parse(s) as { msg: string }) } });
  const r = await registry(logger);
  await r.discovered();
  const bad = (instanceId: string): Buffer => Buffer.from(JSON.stringify({ v: 1, type: 'announce', service: 'noisy', instanceId, startedAt: 1, intervalMs: 1000, methods: ['a'], notifications: [] }));
  for (let i = 0; i < 5; i++) await publishRaw(ns.names.controlExchange, '', bad('one'));
  await publishRaw(ns.names.controlExchange, '', bad('two'));
  await waitFor(() => r.dropped === 6, { message: 'six dropped' });
  const dropped = lines.filter((l) => l.msg.startsWith('announcement dropped'));
  expect(dropped.map((l) => [l.sender, l.reason])).toEqual([['noisy/one', 'schema'], ['noisy/two', 'schema']]);
  expect(r.list()).toEqual([]);
});
