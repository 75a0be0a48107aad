/**
 * The clients the bench drives, one kind per target family. Each runs inside a caller process of
 * its own (bench/caller.ts), as users deploy a caller apart from its service: measured in the bench
 * process, every target's client shared one event loop, heap and garbage collector with the others.
 */
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { connect, type ConfirmChannel, type ConsumeMessage, type Message } from 'amqplib';
import { connectClient, type ClientOptions } from '@warren/amqp';
import { amqpUrl } from '@warren/testkit';
import { openPeerCaller, type PeerCallerSpec } from './peer-callers';

type ReplyMode = NonNullable<ClientOptions['replyMode']>;

/** One client in a caller process: `call` performs one checked round trip and rejects on failure or timeout. */
export interface Caller {
  call: () => Promise<void>;
  stop: () => Promise<void>;
}

/** What the bench process tells a caller process to build, as JSON on its command line. */
export type CallerSpec =
  | { readonly kind: 'amqp'; readonly reply: 'direct' | 'named'; readonly requestQueue: string; readonly replyQueue?: string | undefined; readonly timeoutMs: number }
  /**
   * Plain amqplib doing on the wire what a Warren client does (amqp-guarded.ts), its replies on a named queue
   * (`replyQueue`, acked) or by direct reply-to (consumed noAck: the floor of a tracker that recovers from Redis).
   */
  | { readonly kind: 'amqp-guarded'; readonly reply: 'direct' | 'named'; readonly exchange: string; readonly replyQueue?: string | undefined; readonly timeoutMs: number }
  | { readonly kind: 'warren'; readonly namespace: string; readonly replyMode: ReplyMode; readonly timeoutMs: number }
  /** A peer framework's client (Moleculer, NestJS RMQ, rabbitmq-client), from bench/peers (peer-callers.ts). */
  | PeerCallerSpec;

const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  expected: number;
}

/**
 * Plain amqplib request/reply: the limit Warren is measured against. As `amqp-guarded`, the same
 * client keeps what a Warren client keeps, in plain amqplib: publisher confirms, `mandatory` (a
 * return fails the call), routing through a direct exchange by method, a per-message `expiration`,
 * the three request headers, and, with a named reply queue, replies acked (once per turn of the
 * event loop, as one `multiple` ack) so a reply in flight at a cut is delivered again. By direct
 * reply-to (`reply: 'direct'`) there is nothing to ack: RabbitMQ requires noAck there, and a reply
 * lost at a cut is what a tracker keeping the outcome in Redis would read back instead.
 */
async function amqpCaller(spec: Extract<CallerSpec, { kind: 'amqp' | 'amqp-guarded' }>): Promise<Caller> {
  const guarded = spec.kind === 'amqp-guarded';
  const named = spec.reply === 'named';
  const ackReplies = guarded && named;
  const conn = await connect(amqpUrl(), { noDelay: true });
  const pending = new Map<string, Pending>();
  const failAll = (err: Error): void => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    pending.clear();
  };
  // Warren's reply-consumer.ts acks the same way (one `multiple` ack per turn); written again here on
  // purpose: the guarded targets measure the wire work with none of Warren's code.
  let unacked: ConsumeMessage | undefined;
  const ackTurn = (): void => {
    const last = unacked;
    unacked = undefined;
    try {
      if (last) ch.ack(last, true);
    } catch {
      // The channel closed meanwhile: its replies are requeued, and the calls fail with it.
    }
  };
  const onReply = (msg: ConsumeMessage | null): void => {
    if (msg === null) return failAll(new Error('reply consumer cancelled by broker'));
    if (ackReplies) {
      if (unacked === undefined) setImmediate(ackTurn);
      unacked = msg;
    }
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
  const ch = guarded ? await conn.createConfirmChannel() : await conn.createChannel();
  conn.on('error', (err: Error) => console.error('[amqp-caller] connection error:', err.message));
  ch.on('error', (err: Error) => console.error('[amqp-caller] channel error:', err.message));
  ch.on('close', () => failAll(new Error('channel closed')));
  const replyQueue = named ? (spec.replyQueue ?? '') : DIRECT_REPLY_TO;
  if (named) await ch.assertQueue(replyQueue, { durable: true, exclusive: false, autoDelete: false, arguments: { 'x-expires': 60_000 } });
  // Direct reply-to requires consuming (noAck) before publishing, on the same channel.
  const { consumerTag } = await ch.consume(replyQueue, onReply, { noAck: !ackReplies });
  ch.on('return', (msg: Message) => {
    const cid: unknown = msg.properties.correlationId;
    const p = typeof cid === 'string' ? pending.get(cid) : undefined;
    if (!p || typeof cid !== 'string') return;
    pending.delete(cid);
    clearTimeout(p.timer);
    p.reject(new Error('returned: no queue for the method'));
  });
  // Refilled for every publish, as Warren's client does: amqplib encodes the table before publish returns.
  const traceId = randomBytes(16).toString('hex');
  const headers: Record<string, number | string> = { 'x-warren-protocol': 1, 'x-warren-deadline': 0, traceparent: '' };
  const publish = (body: Buffer, correlationId: string): boolean => {
    if (!guarded) return ch.sendToQueue(spec.requestQueue, body, { correlationId, replyTo: replyQueue });
    headers['x-warren-deadline'] = Date.now() + spec.timeoutMs;
    // Same length as a real traceparent; where its ids come from is the client's own cost, not the wire's.
    headers['traceparent'] = `00-${traceId}-${correlationId.padStart(16, '0')}-01`;
    const options = { mandatory: true, contentType: 'application/json', correlationId, replyTo: replyQueue, expiration: String(spec.timeoutMs), persistent: false, headers };
    return (ch as ConfirmChannel).publish(spec.exchange, 'add', body, options, (err: unknown) => {
      const p = err ? pending.get(correlationId) : undefined;
      if (!p) return;
      pending.delete(correlationId);
      clearTimeout(p.timer);
      p.reject(new Error('not confirmed'));
    });
  };

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
      if (!publish(body, correlationId) && !drained) {
        drained = once(ch, 'drain').finally(() => (drained = null));
      }
    });
  };
  const stop = async (): Promise<void> => {
    try {
      await ch.cancel(consumerTag);
      if (named) await ch.deleteQueue(replyQueue);
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
    case 'amqp':
    case 'amqp-guarded': return amqpCaller(spec);
    case 'warren': return warrenCaller(spec);
    case 'peer': return openPeerCaller(spec);
    default: {
      const never: never = spec;
      throw new Error(`unknown caller kind: ${JSON.stringify(never)}`);
    }
  }
}
