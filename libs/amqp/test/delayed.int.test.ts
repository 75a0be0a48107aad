// Delayed calls over the real RabbitMQ (3.10, no plugin): the delay chain's headers exchanges,
// exchange-to-exchange bindings and TTL queues deliver a delayed call and a delayed notification
// when due and never before, the deadline counting from then; the in-memory broker routes the
// same topology the same way (memory-parity for headers and exchange bindings).
import amqp from 'amqplib';
import { connectClient, startService, type RpcClient } from '@warren/amqp';
import { MemoryBroker, type WireConfirmChannel } from '@warren/amqp-transport';
import { Teardown, amqpUrl } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';

const td = new Teardown();
afterAll(() => td.run());
const ns = new TestNamespace().withDelayChain();
const service = ns.service('later');
const started = new Map<string, number>();
const events: { at: number; tag: string }[] = [];
/** Resolved once `events` holds `count` entries. */
let eventsWanted: { count: number; done: () => void } | undefined;
let client: RpcClient;

beforeAll(async () => {
  td.add(() => ns.destroy());
  const s = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: service,
    methods: { 'later.run': { handler: (p) => (started.set((p as { tag: string }).tag, Date.now()), Date.now()) } },
    notifications: {
      'later.job': {
        handler: (p) => {
          events.push({ at: Date.now(), tag: (p as { tag: string }).tag });
          if (eventsWanted && events.length >= eventsWanted.count) eventsWanted.done();
        },
      },
    },
  });
  td.add(() => s.close());
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
});

it('starts a delayed call when it is due, not before, and answers it', async () => {
  const sent = Date.now();
  const at = await client.call<number>('later.run', { tag: 'a' }, { delayMs: 1500, timeoutMs: 2000 });
  expect(at - sent).toBeGreaterThanOrEqual(1500);
  // The 2 s deadline counted from the due time: a deadline counted from sending would have been spent waiting.
  expect(at - sent).toBeLessThan(1500 + 2000);
});

it('delivers delayed notifications in due order, whatever order they were sent in', async () => {
  const sent = Date.now();
  const waits = [900, 300, 1237, 600];
  const all = new Promise<void>((done) => (eventsWanted = { count: waits.length, done }));
  await Promise.all(waits.map((ms) => client.notify('later.job', { tag: `n${ms}` }, { delayMs: ms })));
  await all;
  expect(events.map((e) => e.tag)).toEqual([...waits].sort((a, b) => a - b).map((ms) => `n${ms}`));
  for (const e of events) expect(e.at - sent).toBeGreaterThanOrEqual(Number(e.tag.slice(1)));
});

describe('headers exchanges and exchange-to-exchange bindings, RabbitMQ and the in-memory broker alike', () => {
  async function routed(ch: WireConfirmChannel, prefix: string, get: (q: string) => Promise<number>): Promise<Record<string, number>> {
    const x = (s: string): string => `${prefix}.${s}`;
    await ch.assertExchange(x('h'), 'headers', { durable: true });
    await ch.assertExchange(x('d'), 'direct', { durable: true });
    for (const q of ['q1', 'q2', 'q3']) await ch.assertQueue(x(q), { durable: true });
    await ch.bindQueue(x('q1'), x('h'), '', { 'x-match': 'all', a: '1', b: '2' });
    await ch.bindQueue(x('q2'), x('h'), '', { 'x-match': 'any', a: '1', b: '9' });
    await ch.bindExchange(x('d'), x('h'), '', { 'x-match': 'all', to: 'd' });
    await ch.bindQueue(x('q3'), x('d'), 'key');
    ch.publish(x('h'), 'key', Buffer.from('1'), { headers: { a: '1', b: '2' } });
    ch.publish(x('h'), 'key', Buffer.from('2'), { headers: { a: '1' } });
    ch.publish(x('h'), 'key', Buffer.from('3'), { headers: { to: 'd' } });
    ch.publish(x('h'), 'other', Buffer.from('4'), { headers: { to: 'd' } });
    await ch.waitForConfirms();
    const counts: Record<string, number> = {};
    for (const q of ['q1', 'q2', 'q3']) counts[q] = await get(x(q));
    return counts;
  }

  it('route alike', async () => {
    const prefix = `${ns.namespace}.parity`;
    const model = await amqp.connect(amqpUrl());
    const ch = await model.createConfirmChannel();
    td.add(async () => {
      for (const q of ['q1', 'q2', 'q3']) await ch.deleteQueue(`${prefix}.${q}`);
      for (const e of ['h', 'd']) await ch.deleteExchange(`${prefix}.${e}`);
      await model.close();
    });
    const real = await routed(ch as unknown as WireConfirmChannel, prefix, async (q) => (await ch.checkQueue(q)).messageCount);
    const bus = new MemoryBroker();
    td.add(() => bus.close());
    const model2 = bus.connect().model as NonNullable<ReturnType<MemoryBroker['connect']>['model']>;
    const memory = await routed(await model2.createConfirmChannel(), prefix, async (q) => bus.queue(q)?.messageCount ?? 0);
    expect(real).toEqual({ q1: 1, q2: 2, q3: 1 });
    expect(memory).toEqual(real);
  });
});
