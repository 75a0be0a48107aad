import type { Channel, ConsumeMessage } from 'amqplib';
import { decode, type ResponseMessage } from '@warren/jsonrpc';

/** RabbitMQ's pseudo-queue for direct reply-to: no queue to declare, but replies die with the channel. */
export const directReplyQueue = 'amq.rabbitmq.reply-to';

export type ReplyMode = 'named' | 'direct';

/**
 * Starts consuming replies on `channel`, handing each (correlation id,
 * response) pair to `deliver`. Replies that are not a single JSON-RPC
 * response are passed as undefined so the owner can count them.
 */
export async function consumeReplies(
  channel: Channel,
  queue: string,
  deliver: (correlationId: string | undefined, response: ResponseMessage | undefined) => void,
): Promise<string> {
  const { consumerTag } = await channel.consume(
    queue,
    (msg: ConsumeMessage | null) => {
      if (!msg) return;
      const decoded = decode(msg.content);
      const response = decoded.kind === 'single' && decoded.item.kind === 'response' ? decoded.item.message : undefined;
      deliver(typeof msg.properties.correlationId === 'string' ? msg.properties.correlationId : undefined, response);
    },
    // Replies are consumed without acks: a reply is worth nothing once its caller is gone.
    { noAck: true },
  );
  return consumerTag;
}

/** True when a named reply queue still exists; it may have expired during a long disconnect. */
export async function replyQueueExists(model: { createChannel(): Promise<Channel> }, queue: string): Promise<boolean> {
  const probe = await model.createChannel();
  // A missing queue closes the probe channel with 404; that is the answer, not an error.
  probe.on('error', () => undefined);
  try {
    await probe.checkQueue(queue);
    await probe.close().catch(() => undefined);
    return true;
  } catch {
    return false;
  }
}
