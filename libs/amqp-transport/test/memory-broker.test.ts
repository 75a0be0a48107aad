import { MemoryBroker, MemoryChannelError, type WireChannel, type WireConfirmChannel, type WireReturned } from '@warren/amqp-transport';
import { collect, settle } from './support/memory';

describe('MemoryBroker: routing, confirms, returns', () => {
  let bus: MemoryBroker;
  beforeEach(() => (bus = new MemoryBroker()));
  afterEach(() => bus.close());

  async function channel(): Promise<WireConfirmChannel> {
    const model = bus.connect().model;
    if (!model) throw new Error('no model');
    return model.createConfirmChannel();
  }

  it('routes direct, topic and fanout exchanges to their bound queues', async () => {
    const ch = await channel();
    await ch.assertExchange('d', 'direct', { durable: false });
    await ch.assertExchange('t', 'topic', { durable: false });
    await ch.assertExchange('f', 'fanout', { durable: false });
    for (const q of ['q1', 'q2', 'q3']) await ch.assertQueue(q, {});
    await ch.bindQueue('q1', 'd', 'add');
    await ch.bindQueue('q2', 't', 'a.*.c');
    await ch.bindQueue('q3', 't', 'a.#');
    await ch.bindQueue('q1', 'f', '');
    await ch.bindQueue('q2', 'f', '');
    ch.publish('d', 'add', Buffer.from('1'));
    ch.publish('d', 'sub', Buffer.from('x'));
    ch.publish('t', 'a.b.c', Buffer.from('2'));
    ch.publish('t', 'a', Buffer.from('3'));
    ch.publish('f', 'anything', Buffer.from('4'));
    ch.publish('', 'q3', Buffer.from('5'));
    await ch.waitForConfirms();
    const counts = await Promise.all(['q1', 'q2', 'q3'].map(async (q) => (await ch.checkQueue(q)).messageCount));
    expect(counts).toEqual([2, 2, 3]);
  });

  it('confirms every publish by callback and waitForConfirms, and returns an unroutable mandatory one before its confirm', async () => {
    const ch = await channel();
    await ch.assertExchange('d', 'direct', { durable: false });
    const events: string[] = [];
    ch.on('return', (m: WireReturned) => events.push(`return ${m.fields.routingKey} ${String(m.properties.correlationId)}`));
    ch.publish('d', 'nobody', Buffer.from('x'), { mandatory: true, correlationId: 'c1' }, (err) => events.push(`confirm ${String(err)}`));
    ch.publish('d', 'nobody', Buffer.from('y'), {}, (err) => events.push(`confirm2 ${String(err)}`));
    expect(events).toEqual([]);
    await ch.waitForConfirms();
    expect(events).toEqual(['return nobody c1', 'confirm null', 'confirm2 null']);
  });

  it('closes the channel with 404 on a publish to a missing exchange, failing its confirm', async () => {
    const ch = await channel();
    const errors: Error[] = [];
    let closed = false;
    ch.on('error', (e) => errors.push(e));
    ch.on('close', () => (closed = true));
    const confirm = new Promise<unknown>((resolve) => ch.publish('missing', 'k', Buffer.from('x'), {}, resolve));
    await expect(ch.waitForConfirms()).rejects.toThrow();
    expect(await confirm).toBeInstanceOf(MemoryChannelError);
    expect(errors[0]).toMatchObject({ code: 404 });
    expect(errors[0]?.message).toContain("NOT_FOUND - no exchange 'missing'");
    expect(closed).toBe(true);
    expect(() => ch.publish('', 'q', Buffer.from('x'))).toThrow('Channel closed');
  });

  it('fails a passive check and a consume of a missing queue with 404, closing the channel', async () => {
    const a = await channel();
    a.on('error', () => undefined);
    await expect(a.checkQueue('nope')).rejects.toMatchObject({ code: 404 });
    await expect(a.assertQueue('q')).rejects.toThrow('Channel closed');
    const b = await channel();
    b.on('error', () => undefined);
    await expect(b.consume('nope', () => undefined)).rejects.toMatchObject({ code: 404 });
  });

  it('closes the channel with 406 on an ack of an unknown delivery tag', async () => {
    const ch = await channel();
    const errors: Error[] = [];
    ch.on('error', (e) => errors.push(e));
    ch.ack({ fields: { deliveryTag: 99 } });
    await settle();
    expect(errors[0]).toMatchObject({ code: 406 });
    expect(errors[0]?.message).toContain('unknown delivery tag 99');
  });

  it('refuses a redeclare with different arguments (406)', async () => {
    const ch = await channel();
    ch.on('error', () => undefined);
    await ch.assertQueue('q', { arguments: { 'x-expires': 1000 } });
    await expect(ch.assertQueue('q', { arguments: { 'x-expires': 2000 } })).rejects.toMatchObject({ code: 406 });
  });

  it('delivers asynchronously, with its own copy of content and headers', async () => {
    const ch = await channel();
    await ch.assertQueue('q', {});
    const { got } = await collect(ch, 'q', { noAck: true });
    const headers: Record<string, unknown> = { a: 1, nested: { b: [1, 2] } };
    const body = Buffer.from('hello');
    ch.publish('', 'q', body, { headers, contentType: 'application/json', persistent: true, expiration: 5000 });
    headers['a'] = 2;
    body.write('HELLO');
    expect(got).toHaveLength(0);
    await settle();
    expect(got).toHaveLength(1);
    const m = got[0];
    expect(m?.content.toString()).toBe('hello');
    expect(m?.properties).toMatchObject({ headers: { a: 1, nested: { b: [1, 2] } }, contentType: 'application/json', deliveryMode: 2, expiration: '5000', correlationId: undefined });
    expect(m?.fields).toMatchObject({ exchange: '', routingKey: 'q', redelivered: false });
  });
});

describe('MemoryBroker: consumers, acks and gets', () => {
  let bus: MemoryBroker;
  let ch: WireChannel;
  beforeEach(async () => {
    bus = new MemoryBroker();
    ch = await (bus.connect().model as NonNullable<ReturnType<MemoryBroker['connect']>['model']>).createChannel();
    await ch.assertQueue('q', {});
  });
  afterEach(() => bus.close());

  it('holds deliveries past the prefetch until acked', async () => {
    await ch.prefetch(2);
    const { got } = await collect(ch, 'q');
    for (let i = 0; i < 5; i++) ch.publish('', 'q', Buffer.from(String(i)));
    await settle();
    expect(got.map((m) => m.content.toString())).toEqual(['0', '1']);
    ch.ack(got[0] as (typeof got)[0]);
    await settle();
    expect(got).toHaveLength(3);
    ch.ack(got[2] as (typeof got)[0], true);
    await settle();
    expect(got.map((m) => m.content.toString())).toEqual(['0', '1', '2', '3', '4']);
  });

  it('redelivers a nacked message (requeue) with the redelivered flag, and drops one nacked without requeue', async () => {
    const { got } = await collect(ch, 'q');
    ch.publish('', 'q', Buffer.from('a'));
    await settle();
    ch.nack(got[0] as (typeof got)[0], false, true);
    await settle();
    expect(got.map((m) => [m.content.toString(), m.fields.redelivered])).toEqual([['a', false], ['a', true]]);
    ch.reject(got[1] as (typeof got)[0], false);
    await settle();
    expect(bus.queue('q')).toMatchObject({ messageCount: 0 });
  });

  it('requeues the unacked messages of a closed channel, redelivered, to other consumers', async () => {
    const other = await (bus.connect().model as NonNullable<ReturnType<MemoryBroker['connect']>['model']>).createChannel();
    const first = await collect(ch, 'q');
    ch.publish('', 'q', Buffer.from('a'));
    await settle();
    expect(first.got).toHaveLength(1);
    const second = await collect(other, 'q');
    await ch.close();
    await settle();
    expect(second.got.map((m) => m.fields.redelivered)).toEqual([true]);
  });

  it('answers basic.get with the message and what is left, and false on an empty queue', async () => {
    ch.publish('', 'q', Buffer.from('a'));
    ch.publish('', 'q', Buffer.from('b'));
    const got = await ch.get('q');
    expect(got && [got.content.toString(), got.fields.messageCount]).toEqual(['a', 1]);
    expect((await ch.checkQueue('q')).messageCount).toBe(1);
    if (got) ch.nack(got, false, true);
    await settle();
    expect((await ch.checkQueue('q')).messageCount).toBe(2);
    await ch.get('q', { noAck: true });
    await ch.get('q', { noAck: true });
    expect(await ch.get('q')).toBe(false);
  });

  it('counts consumers, purges and deletes; a deleted queue cancels its consumers (null delivery)', async () => {
    const c = await collect(ch, 'q');
    ch.publish('', 'q', Buffer.from('a'));
    expect(await ch.checkQueue('q')).toMatchObject({ consumerCount: 1 });
    await ch.cancel(c.tag);
    ch.publish('', 'q', Buffer.from('b'));
    expect(await ch.purgeQueue('q')).toEqual({ messageCount: 1 });
    const d = await collect(ch, 'q');
    expect(await ch.deleteQueue('q')).toEqual({ messageCount: 0 });
    await settle();
    expect(d.cancelled()).toBe(true);
    expect(bus.queue('q')).toBeUndefined();
  });

  it('sends replies through direct reply-to to the channel that published with it', async () => {
    const replies = await collect(ch, 'amq.rabbitmq.reply-to', { noAck: true });
    const worker = await (bus.connect().model as NonNullable<ReturnType<MemoryBroker['connect']>['model']>).createChannel();
    const requests = await collect(worker, 'q', { noAck: true });
    ch.publish('', 'q', Buffer.from('ping'), { replyTo: 'amq.rabbitmq.reply-to', correlationId: 'c1' });
    await settle();
    const replyTo = requests.got[0]?.properties.replyTo ?? '';
    expect(replyTo).toMatch(/^amq\.rabbitmq\.reply-to\..+/);
    worker.publish('', replyTo, Buffer.from('pong'), { correlationId: 'c1' });
    await settle();
    expect(replies.got.map((m) => [m.content.toString(), m.properties.correlationId])).toEqual([['pong', 'c1']]);
  });

  it('refuses a direct reply-to publish from a channel not consuming it (406)', async () => {
    const errors: Error[] = [];
    ch.on('error', (e) => errors.push(e));
    ch.publish('', 'q', Buffer.from('x'), { replyTo: 'amq.rabbitmq.reply-to' });
    await settle();
    expect(errors[0]).toMatchObject({ code: 406 });
  });

  it('drops exclusive queues with their connection and locks them from others (405)', async () => {
    const conn = bus.connect();
    const own = await (conn.model as NonNullable<typeof conn.model>).createChannel();
    await own.assertQueue('mine', { exclusive: true, durable: false });
    ch.on('error', () => undefined);
    await expect(ch.checkQueue('mine')).rejects.toMatchObject({ code: 405 });
    await conn.close();
    expect(bus.queue('mine')).toBeUndefined();
  });
});

describe('MemoryBroker: time (fake timers)', () => {
  let bus: MemoryBroker;
  beforeEach(() => {
    jest.useFakeTimers();
    bus = new MemoryBroker();
  });
  afterEach(async () => {
    await bus.close();
    expect(bus.pendingTimers).toBe(0);
    jest.useRealTimers();
  });

  async function channel(): Promise<WireChannel> {
    return (bus.connect().model as NonNullable<ReturnType<MemoryBroker['connect']>['model']>).createChannel();
  }

  it('expires per-message and x-message-ttl messages, dead-lettering them with x-death (a retry delay queue)', async () => {
    const ch = await channel();
    await ch.assertQueue('work', {});
    await ch.assertQueue('work.retry.500', { arguments: { 'x-message-ttl': 500, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'work' } });
    ch.publish('', 'work.retry.500', Buffer.from('again'), { expiration: '2000', headers: { keep: 1 } });
    await settle();
    await jest.advanceTimersByTimeAsync(499);
    expect(bus.queue('work')?.messageCount).toBe(0);
    await jest.advanceTimersByTimeAsync(10);
    expect(bus.queue('work.retry.500')?.messageCount).toBe(0);
    const got = await ch.get('work');
    expect(got && got.properties.headers).toMatchObject({ keep: 1, 'x-death': [{ count: 1, reason: 'expired', queue: 'work.retry.500' }], 'x-first-death-reason': 'expired' });
    expect(got && got.properties.expiration).toBeUndefined();
  });

  it('drops a message past its expiration without a dead-letter exchange', async () => {
    const ch = await channel();
    await ch.assertQueue('q', {});
    ch.publish('', 'q', Buffer.from('x'), { expiration: 100 });
    await settle();
    await jest.advanceTimersByTimeAsync(150);
    expect(bus.queue('q')?.messageCount).toBe(0);
  });

  it('deletes a queue unused for x-expires, but not while it has a consumer', async () => {
    const ch = await channel();
    await ch.assertQueue('reply', { arguments: { 'x-expires': 1000 } });
    const c = await collect(ch, 'reply');
    await jest.advanceTimersByTimeAsync(5000);
    expect(bus.queue('reply')).toBeDefined();
    await ch.cancel(c.tag);
    await jest.advanceTimersByTimeAsync(999);
    expect(bus.queue('reply')).toBeDefined();
    await jest.advanceTimersByTimeAsync(2);
    expect(bus.queue('reply')).toBeUndefined();
  });

  it('dead-letters the oldest past x-max-length, and a rejected message, to the dead-letter exchange', async () => {
    const ch = await channel();
    await ch.assertExchange('dlx', 'direct', { durable: false });
    await ch.assertQueue('dead', {});
    await ch.bindQueue('dead', 'dlx', 'svc');
    await ch.assertQueue('bounded', { arguments: { 'x-max-length': 2, 'x-dead-letter-exchange': 'dlx', 'x-dead-letter-routing-key': 'svc' } });
    for (const b of ['1', '2', '3']) ch.publish('', 'bounded', Buffer.from(b));
    await settle();
    expect(bus.queue('bounded')?.messageCount).toBe(2);
    const m = await ch.get('bounded');
    if (m) ch.reject(m, false);
    await settle();
    const dead = [await ch.get('dead', { noAck: true }), await ch.get('dead', { noAck: true })];
    expect(dead.map((d) => d && [d.content.toString(), (d.properties.headers?.['x-death'] as { reason: string }[])[0]?.reason])).toEqual([['1', 'maxlen'], ['2', 'rejected']]);
  });

  it('counts quorum redeliveries in x-delivery-count and dead-letters past x-delivery-limit', async () => {
    const ch = await channel();
    await ch.assertQueue('dead', {});
    await ch.assertQueue('qq', { arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 1, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'dead' } });
    ch.publish('', 'qq', Buffer.from('p'));
    const first = await ch.get('qq');
    expect(first && first.properties.headers).toBeUndefined();
    if (first) ch.nack(first, false, true);
    const second = await ch.get('qq');
    expect(second && second.properties.headers?.['x-delivery-count']).toBe(1);
    if (second) ch.nack(second, false, true);
    await settle();
    expect(bus.queue('qq')?.messageCount).toBe(0);
    expect(bus.queue('dead')?.messageCount).toBe(1);
  });

  it('brings a connection back after simulateLoss and re-runs its setups on the new model', async () => {
    const conn = bus.connect();
    let setups = 0;
    await conn.onOpen(async (model) => {
      setups++;
      const ch = await model.createChannel();
      await ch.assertQueue('excl', { exclusive: true, durable: false });
    });
    const lost: Error[] = [];
    conn.on('lost', (e) => lost.push(e));
    await conn.simulateLoss();
    expect(conn.state.type).toBe('reconnecting');
    expect(bus.queue('excl')).toBeUndefined();
    await jest.advanceTimersByTimeAsync(10);
    expect(conn.state.type).toBe('open');
    expect([setups, lost.length, conn.reconnects]).toEqual([2, 1, 1]);
    expect(bus.queue('excl')).toBeDefined();
  });
});
