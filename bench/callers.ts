/**
 * The clients the bench drives, one kind per target family. Each runs inside a caller process of
 * its own (bench/caller.ts), as users deploy a caller apart from its service: measured in the bench
 * process, every target's client shared one event loop, heap and garbage collector with the others.
 */
import { once } from 'node:events';
import { connect, type ConsumeMessage } from 'amqplib';
import { connectClient, type ReplyMode } from '@warren/amqp';
import { amqpUrl } from '@warren/testkit';

/** One client in a caller process: `call` performs one checked round trip and rejects on failure or timeout. */
export interface Caller {
  call: () => Promise<void>;
  stop: () => Promise<void>;
}

/** What the bench process tells a caller process to build, as JSON on its command line. */
export type CallerSpec =
  | { readonly kind: 'amqp'; readonly reply: 'direct' | 'named'; readonly requestQueue: string; readonly replyQueue?: string | undefined; readonly timeoutMs: number }
  | { readonly kind: 'warren'; readonly namespace: string; readonly replyMode: ReplyMode; readonly timeoutMs: number };

const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  expected: number;
}

/** Plain amqplib request/reply: the limit Warren is measured against. */
async function amqpCaller(spec: Extract<CallerSpec, { kind: 'amqp' }>): Promise<Caller> {
  const conn = await connect(amqpUrl(), { noDelay: true });
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
  conn.on('error', (err: Error) => console.error('[amqp-caller] connection error:', err.message));
  ch.on('error', (err: Error) => console.error('[amqp-caller] channel error:', err.message));
  ch.on('close', () => failAll(new Error('channel closed')));
  const replyQueue = spec.reply === 'named' ? (spec.replyQueue ?? '') : DIRECT_REPLY_TO;
  if (spec.reply === 'named') await ch.assertQueue(replyQueue, { exclusive: false, autoDelete: false, arguments: { 'x-expires': 60_000 } });
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
        reject(new Error(`timeout after ${spec.timeoutMs} ms`));
      }, spec.timeoutMs);
      pending.set(correlationId, { resolve, reject, timer, expected: id + 1 });
      if (!ch.sendToQueue(spec.requestQueue, body, { correlationId, replyTo: replyQueue }) && !drained) {
        drained = once(ch, 'drain').finally(() => (drained = null));
      }
    });
  };
  const stop = async (): Promise<void> => {
    try {
      await ch.cancel(consumerTag);
      if (spec.reply === 'named') await ch.deleteQueue(replyQueue);
      await ch.close();
      await conn.close();
    } finally {
      failAll(new Error('stopped'));
    }
  };
  return { call, stop };
}

/** A Warren RpcClient calling the bench service's `add`. */
async function warrenCaller(spec: Extract<CallerSpec, { kind: 'warren' }>): Promise<Caller> {
  const client = await connectClient({ urls: amqpUrl(), namespace: spec.namespace, replyMode: spec.replyMode, defaultTimeoutMs: spec.timeoutMs, maxPending: 100_000 });
  let n = 0;
  return {
    call: async () => {
      const a = n++;
      const result = await client.call<number>('add', [a, 1]);
      if (result !== a + 1) throw new Error(`wrong result ${result} for ${a}+1`);
    },
    stop: () => client.close(),
  };
}

/** Builds the client a spec names. */
export function openCaller(spec: CallerSpec): Promise<Caller> {
  switch (spec.kind) {
    case 'amqp': return amqpCaller(spec);
    case 'warren': return warrenCaller(spec);
    default: {
      const never: never = spec;
      throw new Error(`unknown caller kind: ${JSON.stringify(never)}`);
    }
  }
}
