// The same AMQP scenarios against RabbitMQ and MemoryBroker: each scenario returns what it observed,
// and the two must agree, so the in-memory emulation cannot silently drift from the real broker.
// Queues here are durable (or exclusive): MemoryBroker refuses what RabbitMQ 4.3 refuses by default
// (transient non-exclusive queues, x-queue-master-locator, x-queue-mode). This machine's RabbitMQ 3.10
// permits those, so their parity scenarios run only with AMQP_DENIES_DEPRECATED=1, against a RabbitMQ 4
// node that denies them (AMQP_URL naming it; RabbitMQ 4.3's defaults, or 4.0 with
// deprecated_features.permit.* = false); libs/amqp/test/memory/rabbitmq4.test.ts tests the refusals.
import amqp from 'amqplib';
import { MemoryBroker, type WireChannel, type WireConfirmChannel, type WireMessage, type WireModel } from '@warren/amqp-transport';
import { amqpUrl, uniqueName, waitFor } from '@warren/testkit';

interface Backend {
  readonly model: WireModel;
  close(): Promise<void>;
}

async function rabbit(): Promise<Backend> {
  const model = await amqp.connect(amqpUrl());
  return { model, close: () => model.close() };
}

async function memory(): Promise<Backend> {
  const bus = new MemoryBroker();
  const model = bus.connect().model as WireModel;
  return { model, close: () => bus.close() };
}

type Scenario = (model: WireModel, n: (name: string) => string) => Promise<unknown>;

async function errorOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => 'no error', (e: { code?: unknown }) => e.code);
}

/** An own channel whose error (if any) is captured, and whose close is awaited by `closed`. */
async function watched(model: WireModel): Promise<{ ch: WireConfirmChannel; errors: unknown[]; closed: Promise<void> }> {
  const ch = await model.createConfirmChannel();
  const errors: unknown[] = [];
  ch.on('error', (e: Error & { code?: unknown }) => errors.push(e.code));
  const closed = new Promise<void>((r) => ch.once('close', r));
  return { ch, errors, closed };
}

/** A deprecated-feature declaration on its own connection: RabbitMQ 4.3 closes the connection with 541. */
async function deniedDeclare(model: WireModel, declare: (ch: WireChannel) => Promise<unknown>): Promise<unknown> {
  const events = model as unknown as NodeJS.EventEmitter;
  events.on('error', () => undefined);
  const closed = new Promise<unknown>((resolve) => events.once('close', (e?: { code?: unknown }) => resolve(e?.code)));
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  const failed = await declare(ch).then(() => false, () => true);
  // Permitted (RabbitMQ 3.x, or 4.x with the feature permitted): the connection stays open.
  return { failed, connectionClosedWith: failed ? await closed : 'open' };
}

const deniedByRabbitMq4: Record<string, Scenario> = {
  'RabbitMQ 4.3: a transient non-exclusive queue closes the connection with 541': (model, n) =>
    deniedDeclare(model, (ch) => ch.assertQueue(n('transient'), { durable: false, exclusive: false })),
  'RabbitMQ 4.3: x-queue-master-locator closes the connection with 541': (model, n) =>
    deniedDeclare(model, (ch) => ch.assertQueue(n('located'), { durable: true, arguments: { 'x-queue-master-locator': 'client-local' } })),
};

const scenarios: Record<string, Scenario> = {
  ...(process.env['AMQP_DENIES_DEPRECATED'] === '1' ? deniedByRabbitMq4 : {}),
  'direct, topic and fanout routing': async (model, n) => {
    const ch = await model.createConfirmChannel();
    await ch.assertExchange(n('d'), 'direct', { durable: false, autoDelete: false });
    await ch.assertExchange(n('t'), 'topic', { durable: false });
    await ch.assertExchange(n('f'), 'fanout', { durable: false });
    for (const q of ['q1', 'q2', 'q3']) await ch.assertQueue(n(q), { durable: true });
    await ch.bindQueue(n('q1'), n('d'), 'add');
    await ch.bindQueue(n('q2'), n('t'), 'a.*.c');
    await ch.bindQueue(n('q3'), n('t'), 'a.#');
    await ch.bindQueue(n('q1'), n('f'), '');
    await ch.bindQueue(n('q2'), n('f'), '');
    ch.publish(n('d'), 'add', Buffer.from('1'));
    ch.publish(n('t'), 'a.b.c', Buffer.from('2'));
    ch.publish(n('t'), 'a', Buffer.from('3'));
    ch.publish(n('t'), 'a.b', Buffer.from('4'));
    ch.publish(n('f'), 'x', Buffer.from('5'));
    await ch.waitForConfirms();
    const counts = [];
    for (const q of ['q1', 'q2', 'q3']) counts.push((await ch.checkQueue(n(q))).messageCount);
    await ch.close();
    return counts;
  },
  'a mandatory unroutable publish is returned before it is confirmed': async (model, n) => {
    const ch = await model.createConfirmChannel();
    await ch.assertExchange(n('d'), 'direct', { durable: false });
    const events: string[] = [];
    ch.on('return', (m) => events.push(`return ${m.fields.routingKey} ${String(m.properties.correlationId)}`));
    ch.publish(n('d'), 'nobody', Buffer.from('x'), { mandatory: true, correlationId: 'c1' }, (err) => events.push(`confirm ${String(err)}`));
    await ch.waitForConfirms();
    await ch.close();
    return events;
  },
  'publishing to a missing exchange closes the channel with 404': async (model, n) => {
    const { ch, errors, closed } = await watched(model);
    ch.publish(n('missing'), 'k', Buffer.from('x'));
    await closed;
    return errors;
  },
  'a passive check and a consume of a missing queue fail with 404': async (model, n) => {
    const a = await watched(model);
    const check = await errorOf(a.ch.checkQueue(n('nope')));
    const b = await watched(model);
    const consume = await errorOf(b.ch.consume(n('nope'), () => undefined));
    await Promise.all([a.closed, b.closed]);
    return [check, consume, a.errors, b.errors];
  },
  'an ack of an unknown delivery tag closes the channel with 406': async (model) => {
    const { ch, errors, closed } = await watched(model);
    ch.ack({ fields: { deliveryTag: 42 } });
    await closed;
    return errors;
  },
  'a redeclare with a different x-expires fails with 406': async (model, n) => {
    const { ch, closed } = await watched(model);
    await ch.assertQueue(n('q'), { durable: true, arguments: { 'x-expires': 60_000 } });
    const code = await errorOf(ch.assertQueue(n('q'), { durable: true, arguments: { 'x-expires': 30_000 } }));
    await closed;
    return code;
  },
  'nack with requeue redelivers with the flag; basic.get reports what is left': async (model, n) => {
    const ch = await model.createChannel();
    await ch.assertQueue(n('q'), { durable: true });
    ch.publish('', n('q'), Buffer.from('a'));
    ch.publish('', n('q'), Buffer.from('b'));
    await waitFor(async () => (await ch.checkQueue(n('q'))).messageCount === 2);
    const first = await ch.get(n('q'));
    const seen: unknown[] = [first && [first.content.toString(), first.fields.redelivered, first.fields.messageCount]];
    if (first) ch.nack(first, false, true);
    const again = await ch.get(n('q'));
    seen.push(again && [again.content.toString(), again.fields.redelivered, again.fields.messageCount]);
    if (again) ch.ack(again);
    seen.push((await ch.checkQueue(n('q'))).messageCount);
    await ch.close();
    return seen;
  },
  'delivered properties: headers copied, persistent as delivery mode 2, expiration as a string, unset ones undefined': async (model, n) => {
    const ch = await model.createChannel();
    await ch.assertQueue(n('q'), { durable: true });
    const got: WireMessage[] = [];
    await ch.consume(n('q'), (m) => void (m && got.push(m)), { noAck: true });
    ch.publish('', n('q'), Buffer.from('x'), { headers: { s: 'v', i: 7, nested: { b: true } }, persistent: true, expiration: 60_000, contentType: 'application/json', correlationId: 'c' });
    await waitFor(() => got.length === 1);
    await ch.close();
    const p = got[0]?.properties;
    return { headers: p?.headers, deliveryMode: p?.deliveryMode, expiration: p?.expiration, contentType: p?.contentType, correlationId: p?.correlationId, replyTo: p?.replyTo, messageId: p?.messageId, fields: { exchange: got[0]?.fields.exchange, redelivered: got[0]?.fields.redelivered } };
  },
  'an expired message is dead-lettered with x-death, without its expiration': async (model, n) => {
    const ch = await model.createChannel();
    await ch.assertQueue(n('dead'), { durable: true });
    await ch.assertQueue(n('delay'), { durable: true, arguments: { 'x-message-ttl': 50, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': n('dead') } });
    ch.publish('', n('delay'), Buffer.from('x'), { headers: { keep: 1 } });
    await waitFor(async () => (await ch.checkQueue(n('dead'))).messageCount === 1, { timeoutMs: 5000 });
    const m = await ch.get(n('dead'), { noAck: true });
    await ch.close();
    const h: Record<string, unknown> = (m ? m.properties.headers : undefined) ?? {};
    const death = (h['x-death'] as Record<string, unknown>[] | undefined)?.[0] ?? {};
    return { keep: h['keep'], reason: death['reason'], count: death['count'], queue: death['queue'] === n('delay'), first: h['x-first-death-reason'], expiration: m && m.properties.expiration };
  },
  'direct reply-to: the reply reaches the channel that published with it': async (model, n) => {
    const caller = await model.createChannel();
    const worker = await model.createChannel();
    await worker.assertQueue(n('q'), { durable: true });
    const replies: string[] = [];
    await caller.consume('amq.rabbitmq.reply-to', (m) => void (m && replies.push(m.content.toString())), { noAck: true });
    let replyTo = '';
    await worker.consume(n('q'), (m) => {
      if (!m) return;
      replyTo = m.properties.replyTo ?? '';
      worker.publish('', replyTo, Buffer.from('pong'));
    }, { noAck: true });
    caller.publish('', n('q'), Buffer.from('ping'), { replyTo: 'amq.rabbitmq.reply-to' });
    await waitFor(() => replies.length === 1);
    await caller.close();
    await worker.close();
    return [replies, /^amq\.rabbitmq\.reply-to\..+/.test(replyTo)];
  },
  'deleting a queue cancels its consumer (a null delivery)': async (model, n) => {
    const ch: WireChannel = await model.createChannel();
    await ch.assertQueue(n('q'), { durable: true });
    let cancelled = false;
    await ch.consume(n('q'), (m) => void (m === null && (cancelled = true)));
    const other = await model.createChannel();
    const deleted = await other.deleteQueue(n('q'));
    await waitFor(() => cancelled);
    await other.close();
    await ch.close();
    return deleted;
  },
};

describe.each(Object.entries(scenarios))('parity: %s', (_title, scenario) => {
  it('observes the same on RabbitMQ and on MemoryBroker', async () => {
    const observed: unknown[] = [];
    for (const open of [rabbit, memory]) {
      const backend = await open();
      const prefix = uniqueName('parity');
      const declared = new Set<string>();
      const n = (name: string): string => (declared.add(`${prefix}.${name}`), `${prefix}.${name}`);
      try {
        observed.push(await scenario(backend.model, n));
      } finally {
        const ch = await backend.model.createChannel().catch(() => undefined);
        if (ch) {
          for (const name of declared) await ch.deleteQueue(name).catch(() => undefined);
          await ch.close().catch(() => undefined);
        }
        // Exchanges a scenario declared are non-durable and deleted by name on RabbitMQ.
        if (open === rabbit) {
          const cleanup = await amqp.connect(amqpUrl());
          const ex = await cleanup.createChannel();
          for (const name of declared) await ex.deleteExchange(name).catch(() => undefined);
          await cleanup.close().catch(() => undefined);
        }
        // A scenario may have had the connection closed by the broker.
        await backend.close().catch(() => undefined);
      }
    }
    expect(observed[1]).toEqual(observed[0]);
  });
});
