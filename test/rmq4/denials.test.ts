// The RabbitMQ 4 stage runs against a node that really denies what RabbitMQ 4.3 denies by default
// (scripts/rabbitmq4.ts writes `deprecated_features.permit.<feature> = false` into its rabbitmq.conf):
// without this, the stage could pass against a permissive broker and prove nothing.
import amqp from 'amqplib';
import { Teardown, amqpUrl, uniqueName } from '@warren/testkit';

const td = new Teardown();
afterAll(() => td.run());

/** A fresh connection (a denial closes the whole connection with 541) and the error that closed it, if any. */
async function connection(): Promise<{ conn: amqp.ChannelModel; closedWith: Promise<unknown> }> {
  const conn = await amqp.connect(amqpUrl(), { noDelay: true });
  const closedWith = new Promise<unknown>((resolve) => {
    conn.on('error', (err: { code?: unknown }) => resolve(err.code));
    conn.on('close', () => resolve('closed'));
  });
  td.add(() => conn.close().catch(() => undefined));
  return { conn, closedWith };
}

/** Runs `declare` on a fresh channel; resolves with the code of the connection error it caused, or 'ok'. */
async function outcome(declare: (ch: amqp.Channel) => Promise<unknown>): Promise<unknown> {
  const { conn, closedWith } = await connection();
  const ch = await conn.createChannel();
  ch.on('error', () => undefined);
  try {
    await declare(ch);
    return 'ok';
  } catch {
    return closedWith;
  }
}

it('is RabbitMQ 4.x', async () => {
  const { conn } = await connection();
  expect(String(conn.connection.serverProperties.version)).toMatch(/^4\./);
});

it('refuses a transient non-exclusive queue with 541 (transient_nonexcl_queues denied)', async () => {
  expect(await outcome((ch) => ch.assertQueue(uniqueName('rmq4-transient'), { durable: false, exclusive: false }))).toBe(541);
});

it('refuses x-queue-master-locator with 541 (queue_master_locator denied)', async () => {
  const name = uniqueName('rmq4-locator');
  expect(await outcome((ch) => ch.assertQueue(name, { durable: true, arguments: { 'x-queue-master-locator': 'client-local' } }))).toBe(541);
});

it('takes what Warren declares instead: a durable queue with x-expires, and a transient exclusive one', async () => {
  const durable = uniqueName('rmq4-durable');
  const ok = await outcome(async (ch) => {
    await ch.assertQueue(durable, { durable: true, exclusive: false, arguments: { 'x-expires': 60_000 } });
    await ch.assertQueue('', { durable: false, exclusive: true });
    await ch.deleteQueue(durable);
  });
  expect(ok).toBe('ok');
});
