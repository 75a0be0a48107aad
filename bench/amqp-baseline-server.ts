/**
 * Plain-amqplib JSON-RPC "add" service used as the benchmark baseline (child process).
 *
 *   node --import tsx bench/amqp-baseline-server.ts <queue>
 *
 * stdout protocol: prints `ready` once consuming; for each `cpu` line on stdin prints
 * `cpu <userUs+systemUs>` (cumulative process.cpuUsage()). SIGTERM: cancel, delete queue, close, exit 0.
 */
import { connect, type ConsumeMessage } from 'amqplib';
import { amqpUrl } from '@warren/testkit';
import { respond } from './add-answer';
import { serveChild } from './serve-child';

const AMQP_URL = amqpUrl();
/** The bench's `--prefetch` (rpc-bench.ts), the same for every target's service. */
const PREFETCH = Number(process.env['BENCH_PREFETCH'] ?? 64);

async function main(): Promise<void> {
  const queue = process.argv[2];
  if (!queue) throw new Error('usage: amqp-baseline-server.ts <queue>');

  // noDelay matters: publishing the reply then acking as two small writes hits Nagle + delayed ACK (~40 ms).
  const conn = await connect(AMQP_URL, { noDelay: true });
  conn.on('error', (err: Error) => console.error('[baseline-server] connection error:', err.message));
  const ch = await conn.createChannel();
  ch.on('error', (err: Error) => console.error('[baseline-server] channel error:', err.message));
  // x-expires is only a safety net for crashed runs; normal shutdown deletes the queue.
  await ch.assertQueue(queue, { durable: true, autoDelete: false, arguments: { 'x-expires': 60_000 } });
  await ch.prefetch(PREFETCH);

  const onMessage = (msg: ConsumeMessage | null): void => {
    if (msg === null) return; // consumer cancelled by the broker
    const replyTo: unknown = msg.properties.replyTo;
    const correlationId: unknown = msg.properties.correlationId;
    if (typeof replyTo === 'string' && replyTo !== '') {
      const reply = Buffer.from(JSON.stringify(respond(msg.content)));
      ch.sendToQueue(replyTo, reply, typeof correlationId === 'string' ? { correlationId } : {});
    }
    ch.ack(msg);
  };
  const { consumerTag } = await ch.consume(queue, onMessage, { noAck: false });
  serveChild('baseline-server', async () => {
    await ch.cancel(consumerTag);
    await ch.deleteQueue(queue);
    await ch.close();
    await conn.close();
  });
}

main().catch((err: unknown) => {
  console.error('[baseline-server] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
