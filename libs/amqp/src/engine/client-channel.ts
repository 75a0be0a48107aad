import type { WireConfirmChannel, WireModel } from '@warren/amqp-transport';
import type { ResponseMessage, RpcUnreadableReplyError } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { Names } from '../wire/names';
import type { Progress } from '../wire/progress';
import { applyTopology, coreTopology, replyQueueOptions } from '../wire/topology';
import { consumeReplies, type ReplyMode } from './reply-consumer';
import type { RestartProbe } from './restart-probe';

/** What the client's channel tells its client, and what it needs to know to open. */
export interface ClientChannelHooks {
  readonly log: Logger;
  readonly n: Names;
  readonly replyMode: ReplyMode;
  readonly replyQueue: string;
  readonly replyQueueExpiresMs: number;
  /** Named mode: the reply queue's restart probe (restart-probe.ts). */
  readonly probe: RestartProbe;
  /** RabbitMQ returned a request, job or notification (mandatory publish, no queue bound for `routingKey`). */
  readonly returned: (callId: string | undefined, routingKey: string, messageId: string | undefined) => void;
  /** The channel closed (by RabbitMQ, with its connection, or by the client). */
  readonly closed: (ch: WireConfirmChannel) => void;
  /** The named reply queue cannot be declared: its home node is down (404). The open fails after this. */
  readonly replyQueueUnavailable: (err: unknown) => void;
  readonly reply: (callId: string | undefined, response: ResponseMessage | RpcUnreadableReplyError, userId: string | undefined) => void;
  readonly progress: (callId: string, progress: Progress, userId: string | undefined) => void;
}

/**
 * Opens an RpcClient's channel on `model`: confirms on, returns heard, the core topology declared,
 * the reply queue declared (named mode) and consumed. Run on every (re)connect and channel rebuild.
 */
export async function openClientChannel(model: WireModel, h: ClientChannelHooks): Promise<WireConfirmChannel> {
  const ch = await model.createConfirmChannel();
  ch.on('error', (err: Error) => h.log.warn({ err }, 'client channel error'));
  ch.on('return', (msg) => h.returned(msg.properties.correlationId as string | undefined, msg.fields.routingKey, msg.properties.messageId as string | undefined));
  ch.on('close', () => h.closed(ch));
  await applyTopology(ch, coreTopology(h.n));
  if (h.replyMode === 'named') {
    // Durable with x-expires, never transient non-exclusive (RabbitMQ 4.3 refuses those): it outlives a reconnect
    // (not exclusive) and goes by itself once nobody has consumed it for replyQueueExpiresMs.
    // 404 on a declare: a durable queue whose home node is down (a cluster) cannot be declared, nor used, until
    // that node returns (the client moves to a new one, and a new probe with it).
    const unavailable = (err: unknown): never => {
      if ((err as { code?: unknown }).code === 404) h.replyQueueUnavailable(err);
      throw err;
    };
    await ch.assertQueue(h.replyQueue, replyQueueOptions(h.replyQueueExpiresMs)).catch(unavailable);
    await h.probe.open(model).catch(unavailable);
  }
  await consumeReplies(ch, h.replyQueue, h.reply, { ack: h.replyMode === 'named', progress: h.progress });
  return ch;
}
