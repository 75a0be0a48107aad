/**
 * Plain-amqplib request/reply baseline target: a child-process "add" server
 * (amqp-baseline-server.ts) and an in-process client using direct reply-to or a named reply queue.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { BenchSession, BenchTarget } from './harness';
import { processRssMb } from './proc-stats';
import { amqpUrl } from '@warren/testkit';

export const AMQP_URL = amqpUrl();
const SERVER_FILE = join(__dirname, 'amqp-baseline-server.ts');
const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

export interface AmqpBaselineOptions {
  reply: 'direct' | 'named';
  /** Per-call timeout (ms). Default 10 000. */
  timeoutMs?: number;
}

/** Unique per run: pid + random suffix. */
export function uniqueName(prefix: string): string {
  return `${prefix}.${process.pid}.${randomBytes(4).toString('hex')}`;
}

interface ServerChild {
  serverCpuUs: () => Promise<number>;
  serverRssMb: () => number | null;
  pid: number | undefined;
  stop: () => Promise<void>;
}

/** Spawns the server under tsx and waits for its `ready` line. */
export async function spawnServer(file: string, args: readonly string[], readyTimeoutMs = 20_000): Promise<ServerChild> {
  const child = spawn(process.execPath, [...(process.env['BENCH_PROF'] ? ['--cpu-prof', '--cpu-prof-dir=' + process.env['BENCH_PROF']] : []), '--import', 'tsx', file, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const cpuWaiters: Array<(us: number) => void> = [];
  const exited = once(child, 'exit');
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));

  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'ready') onReady();
    else if (line.startsWith('cpu ')) cpuWaiters.shift()?.(Number(line.slice(4)));
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      exited.then(([code]) => Promise.reject(new Error(`server exited before ready (code ${String(code)})`))),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('server not ready in time')), readyTimeoutMs))),
    ]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }

  const serverCpuUs = (): Promise<number> =>
    new Promise((resolve) => {
      cpuWaiters.push(resolve);
      child.stdin.write('cpu\n');
    });
  return { serverCpuUs, serverRssMb: () => processRssMb(child.pid), pid: child.pid, stop };
}

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  expected: number;
}

async function startBaseline(opts: AmqpBaselineOptions): Promise<BenchSession> {
  const requestQueue = uniqueName('bench.amqp.rpc');
  const server = await spawnServer(SERVER_FILE, [requestQueue]);
  let conn: ChannelModel | undefined;
  try {
    conn = await connect(AMQP_URL, { noDelay: true });
    return await openClient(conn, server, requestQueue, opts);
  } catch (err) {
    await conn?.close().catch(() => undefined);
    await server.stop();
    throw err;
  }
}

async function openClient(conn: ChannelModel, server: ServerChild, requestQueue: string, opts: AmqpBaselineOptions): Promise<BenchSession> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const pending = new Map<string, Pending>();
  const failAll = (err: Error): void => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    pending.clear();
  };

  const onReply = (msg: ConsumeMessage | null): void => {
    if (msg === null) return failAll(new Error('reply consumer cancelled by broker'));
    const cid: unknown = msg.properties.correlationId;
    const p = typeof cid === 'string' ? pending.get(cid) : undefined;
    if (!p || typeof cid !== 'string') return; // late reply after timeout, or foreign message
    pending.delete(cid);
    clearTimeout(p.timer);
    const text = msg.content.toString('utf8');
    let result: unknown;
    try {
      result = (JSON.parse(text) as { result?: unknown }).result;
    } catch {
      result = undefined;
    }
    if (result === p.expected) p.resolve();
    else p.reject(new Error(`bad reply: ${text}`));
  };

  const ch = await conn.createChannel();
  conn.on('error', (err: Error) => console.error('[amqp-baseline] connection error:', err.message));
  ch.on('error', (err: Error) => console.error('[amqp-baseline] channel error:', err.message));
  ch.on('close', () => failAll(new Error('channel closed')));

  let replyQueue = DIRECT_REPLY_TO;
  if (opts.reply === 'named') {
    replyQueue = uniqueName('bench.amqp.reply');
    await ch.assertQueue(replyQueue, { exclusive: false, autoDelete: false, arguments: { 'x-expires': 60_000 } });
  }
  // Direct reply-to requires consuming (noAck) before publishing, on the same channel.
  const { consumerTag } = await ch.consume(replyQueue, onReply, { noAck: true });

  let seq = 0;
  let drained: Promise<unknown> | null = null;
  const call = async (): Promise<void> => {
    if (drained) await drained;
    const id = ++seq;
    const correlationId = id.toString(36);
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'add', params: [id, 1], id }));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(correlationId);
        reject(new Error(`timeout after ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(correlationId, { resolve, reject, timer, expected: id + 1 });
      if (!ch.sendToQueue(requestQueue, body, { correlationId, replyTo: replyQueue }) && !drained) {
        drained = once(ch, 'drain').finally(() => (drained = null));
      }
    });
  };

  const stop = async (): Promise<void> => {
    try {
      await ch.cancel(consumerTag);
      if (opts.reply === 'named') await ch.deleteQueue(replyQueue);
      await ch.close();
      await conn.close();
    } catch (err) {
      console.error('[amqp-baseline] cleanup error:', err instanceof Error ? err.message : err);
    } finally {
      failAll(new Error('stopped'));
      await server.stop(); // server deletes the request queue on SIGTERM
    }
  };

  return { call, stop, serverCpuUs: server.serverCpuUs, serverRssMb: server.serverRssMb, serverPid: server.pid };
}

export function amqpBaseline(opts: AmqpBaselineOptions): BenchTarget {
  return { name: `amqp-${opts.reply}`, start: () => startBaseline(opts) };
}
