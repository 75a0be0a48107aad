import type { WireExchangeOptions, WireExchangeType, WireProperties, WireQueueInfo, WireQueueOptions } from '../contract';
import type { StoredMessage } from './message';
import type { DeathReason, MemoryQueue } from './queue';
import type { BrokerTimers } from './timers';

/** RabbitMQ's direct reply-to pseudo-queue: consumed (no-ack) on a channel, named in `replyTo` by publishes on it. */
export const directReplyTo = 'amq.rabbitmq.reply-to';

/**
 * A channel as the broker sees it for direct reply-to: the address it consumes replies on, and the
 * delivery of one reply. (MemoryChannel implements it; naming the class here would make the channel
 * and its host import each other.)
 */
export interface ReplyChannel {
  readonly replyAddress: string | undefined;
  deliverReply(content: Buffer, routingKey: string, msg: Omit<StoredMessage, 'content'>): void;
}

/** What a channel asks of its broker. Methods throw MemoryChannelError where RabbitMQ closes the channel, MemoryConnectionError where it closes the connection. */
export interface ChannelHost {
  readonly timers: BrokerTimers;
  assertExchange(name: string, type: WireExchangeType, options: WireExchangeOptions): void;
  assertQueue(name: string, options: WireQueueOptions, connectionId: number): WireQueueInfo;
  checkQueue(name: string, connectionId: number): WireQueueInfo;
  deleteQueue(name: string): number;
  purgeQueue(name: string, connectionId: number): number;
  bindQueue(queue: string, exchange: string, pattern: string, args: Record<string, unknown> | undefined, connectionId: number): void;
  bindExchange(destination: string, source: string, pattern: string, args: Record<string, unknown> | undefined): void;
  /** Routes a message; false when no queue took it. */
  publish(exchange: string, routingKey: string, content: Buffer, properties: WireProperties): boolean;
  /** The queue, for consume and get: 404 when missing, 405 when another connection owns it exclusively. */
  queueFor(name: string, connectionId: number): MemoryQueue;
  deadLetter(queue: MemoryQueue, msg: StoredMessage, reason: DeathReason): void;
  /** The properties a consumer sees: a fresh copy, with `x-delivery-count` on a quorum queue's redeliveries. */
  deliveredProperties(queue: MemoryQueue, msg: StoredMessage): WireProperties;
  registerReplyTo(channel: ReplyChannel): string;
  releaseReplyTo(address: string): void;
  channelClosed(channel: ReplyChannel): void;
}
