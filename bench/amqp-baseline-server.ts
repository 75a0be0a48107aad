/**
 * Plain-amqplib JSON-RPC "add" service used as the benchmark baseline (child process).
 *
 *   node --import tsx bench/amqp-baseline-server.ts <queue>
 *
 * stdout protocol: prints `ready` once consuming; for each `cpu` line on stdin prints
 * `cpu <userUs+systemUs>` (cumulative process.cpuUsage()). SIGTERM: cancel, delete queue, close, exit 0.
 */
import { createInterface } from 'node:readline';
import { connect, type ConsumeMessage } from 'amqplib';
import { amqpUrl } from '@warren/testkit';

const AMQP_URL = amqpUrl();
/** The bench's `--prefetch` (rpc-bench.ts), the same for every target's service. */
const PREFETCH = Number(process.env['BENCH_PREFETCH'] ?? 64);

interface Request {
  jsonrpc: '2.0';
  method: string;
  params: [number, number];
  id: string | number;
}

function isRequest(v: unknown): v is Request {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  const p = r['params'];
  return (
    r['jsonrpc'] === '2.0' &&
    typeof r['method'] === 'string' &&
    (typeof r['id'] === 'string' || typeof r['id'] === 'number') &&
    Array.isArray(p) && p.length === 2 && typeof p[0] === 'number' && typeof p[1] === 'number'
  );
}

function respond(body: Buffer): object {
  let req: unknown;
  try {
    req = JSON.parse(body.toString('utf8'));
  } catch {
    return { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null };
  }
  if (!isRequest(req)) return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null };
  if (req.method !== 'add') return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: req.id };
  return { jsonrpc: '2.0', result: req.params[0] + req.params[1], id: req.id };
}

async function main(): Promise<void> {
  const queue = process.argv[2];
  if (!queue) throw new Error('usage: amqp-baseline-server.ts <queue>');

  // noDelay matters: publishing the reply then acking as two small writes hits Nagle + delayed ACK (~40 ms).
  const conn = await connect(AMQP_URL, { noDelay: true });
  conn.on('error', (err: Error) => console.error('[baseline-server] connection error:', err.message));
  const ch = await conn.createChannel();
  ch.on('error', (err: Error) => console.error('[baseline-server] channel error:', err.message));
  // x-expires is only a safety net for crashed runs; normal shutdown deletes the queue.
  await ch.assertQueue(queue, { durable: false, autoDelete: false, arguments: { 'x-expires': 60_000 } });
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
  process.stdout.write('ready\n');

  const stdin = createInterface({ input: process.stdin });
  stdin.on('line', (line) => {
    if (line.trim() !== 'cpu') return;
    const u = process.cpuUsage();
    process.stdout.write(`cpu ${u.user + u.system}\n`);
  });

  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    stdin.close();
    try {
      await ch.cancel(consumerTag);
      await ch.deleteQueue(queue);
      await ch.close();
      await conn.close();
    } catch (err) {
      console.error('[baseline-server] shutdown error:', err instanceof Error ? err.message : err);
      process.exitCode = 1;
    }
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  stdin.once('close', () => void shutdown()); // parent went away (or shutdown already closed it)
}

main().catch((err: unknown) => {
  console.error('[baseline-server] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
