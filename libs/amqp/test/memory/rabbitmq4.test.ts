// The in-memory broker refuses what RabbitMQ 4.3 refuses by default, the way RabbitMQ does (a
// connection closed with 541, or a channel closed with 406), so every unit and embedded test guards
// Warren against declaring what a 4.3 node would refuse; and quorum queues carry 4.0's default
// delivery limit of 20. memory-parity.int.test.ts cannot check these against this machine's 3.10
// (which permits them): the RabbitMQ 4 node's run of test/integration/queue-rules.int.test.ts does.
import { MemoryConnectionError, type MemoryConnection, type WireConfirmChannel } from '@warren/amqp-transport';
import { World, settleTicks, until, useWorld } from './world';

let w: World;
useWorld((made) => (w = made));

async function channelOn(connection: MemoryConnection): Promise<WireConfirmChannel> {
  const model = connection.model;
  if (!model) throw new Error('no model');
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  return ch;
}

describe('RabbitMQ 4.3 denied-by-default features', () => {
  it('closes the connection with 541 on a queue both non-durable and non-exclusive (transient_nonexcl_queues)', async () => {
    const connection = w.bus.connect();
    const lost: Error[] = [];
    connection.on('lost', (e) => lost.push(e));
    const ch = await channelOn(connection);
    const other = await channelOn(connection);
    const err: unknown = await ch.assertQueue('transient', { durable: false, exclusive: false, arguments: { 'x-expires': 60_000 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryConnectionError);
    expect(err).toMatchObject({ code: 541 });
    expect((err as MemoryConnectionError).replyText.startsWith('INTERNAL_ERROR - Feature `transient_nonexcl_queues` is deprecated.\n')).toBe(true);
    expect(Buffer.byteLength((err as MemoryConnectionError).replyText)).toBeLessThanOrEqual(255);
    await settleTicks();
    // The whole connection went, every channel with it: a hard error, not a channel error.
    expect(lost).toHaveLength(1);
    expect([ch, other].map((c) => (c as unknown as { isOpen: boolean }).isOpen)).toEqual([false, false]);
    expect(w.bus.queue('transient')).toBeUndefined();
  });

  it('accepts the shapes RabbitMQ 4.3 accepts: durable (with or without x-expires), and exclusive non-durable', async () => {
    const ch = await channelOn(w.bus.connect());
    await ch.assertQueue('durable-expiring', { durable: true, arguments: { 'x-expires': 60_000 } });
    await ch.assertQueue('durable', {});
    await ch.assertQueue('mine', { durable: false, exclusive: true });
    expect(['durable-expiring', 'durable', 'mine'].map((q) => w.bus.queue(q) !== undefined)).toEqual([true, true, true]);
  });

  it('closes the connection with 541 on x-queue-master-locator (queue_master_locator)', async () => {
    const ch = await channelOn(w.bus.connect());
    const err = await ch.assertQueue('located', { arguments: { 'x-queue-master-locator': 'client-local' } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 541 });
    expect((err as MemoryConnectionError).replyText.startsWith('INTERNAL_ERROR - Feature `queue_master_locator` is deprecated.')).toBe(true);
  });

  it('closes the channel with 406 on x-queue-mode (CQv1 is gone), leaving the connection open', async () => {
    const connection = w.bus.connect();
    const ch = await channelOn(connection);
    const err = await ch.assertQueue('lazy', { arguments: { 'x-queue-mode': 'lazy' } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 406 });
    expect(String((err as Error).message)).toContain("invalid arg 'x-queue-mode'");
    await settleTicks();
    expect(connection.state.type).toBe('open');
  });

  it('refuses global QoS with 540, stricter than RabbitMQ 4.3 (which applies it per consumer), and keeps per-consumer QoS', async () => {
    const connection = w.bus.connect();
    const ch = await channelOn(connection);
    await expect(ch.prefetch(1, true)).rejects.toMatchObject({ code: 540 });
    await settleTicks();
    expect(connection.state.type).toBe('open');
    const per = await channelOn(connection);
    await expect(per.prefetch(1, false)).resolves.toBeDefined();
  });
});

describe('quorum delivery limits (RabbitMQ 4.0+ default of 20)', () => {
  /** A quorum service whose handler cuts its own connection on every delivery: each one is returned to the queue. */
  async function poisoned(name: string, deliveryLimit?: number): Promise<() => number> {
    let starts = 0;
    const connection = w.bus.connect();
    await w.service({
      connection, name, queueType: 'quorum', ...(deliveryLimit === undefined ? {} : { deliveryLimit }),
      methods: {
        [`${name}.crash`]: {
          handler: async (_p, ctx) => {
            starts++;
            // A delivery can come while the reconnect's setups still run: cut once the connection is open.
            const cut = (): void => queueMicrotask(() => void connection.simulateLoss());
            if (connection.state.type === 'open') cut();
            else connection.once('open', cut);
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
            return 'unreachable';
          },
        },
      },
    });
    return () => starts;
  }

  async function deadLettered(name: string, starts: () => number, expected: number): Promise<void> {
    const client = await w.client();
    void client.call(`${name}.crash`, [], { timeoutMs: 600_000 }).catch(() => undefined);
    await until(
      (async () => {
        while ((w.bus.queue(`warren.svc.${name}.dead`)?.messageCount ?? 0) === 0) await jest.advanceTimersByTimeAsync(20);
      })(),
      20,
      600_000,
    );
    // The first delivery and `limit` redeliveries; the next return went to the dead-letter exchange.
    expect(starts()).toBe(expected);
    expect(w.bus.queue(`warren.svc.${name}`)?.messageCount).toBe(0);
  }

  it('without deliveryLimit, a quorum request queue dead-letters a request after 20 redeliveries', async () => {
    const starts = await poisoned('unset');
    await deadLettered('unset', starts, 21);
  });

  it('an explicit deliveryLimit replaces the default', async () => {
    const starts = await poisoned('explicit', 2);
    await deadLettered('explicit', starts, 3);
  });
});
