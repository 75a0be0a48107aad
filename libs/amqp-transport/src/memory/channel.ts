import { EventEmitter } from 'node:events';
import type {
  WireConfirmChannel, WireConsumeOptions, WireDelivered, WireExchangeOptions, WireExchangeType, WireGetMessage, WireMessage,
  WirePublishOptions, WireQueueInfo, WireQueueOptions, WireReturned,
} from '../contract';
import { assertPermittedQos } from './deprecated';
import { MemoryChannelError, MemoryConnectionError, MemoryIllegalOperationError, preconditionFailed } from './errors';
import { copyProperties, propertiesOf, type StoredMessage } from './message';
import type { MemoryQueue, QueueConsumer } from './queue';
import { directReplyTo, type ChannelHost, type ReplyChannel } from './host';

interface Unacked {
  readonly queue: MemoryQueue;
  readonly msg: StoredMessage;
  readonly consumer: QueueConsumer | undefined;
}

type Callback = (err: unknown) => void;

/**
 * One channel. Every operation is taken in call order and carried out on a
 * later promise job, as if it had crossed a socket: a publish is routed, a
 * delivery arrives, a confirm comes back, each after the call returns. What
 * RabbitMQ answers with a channel close (404, 405, 406) closes this channel
 * the same way: 'error', then 'close', and every later use throws.
 */
export class MemoryChannel extends EventEmitter implements WireConfirmChannel, ReplyChannel {
  private closed = false;
  private tagSeq = 0;
  private readonly unacked = new Map<number, Unacked>();
  private readonly consumers = new Map<string, { readonly consumer: QueueConsumer; readonly queue: MemoryQueue }>();
  private prefetchCount = 0;
  /** This channel's direct reply-to address, once it consumes `amq.rabbitmq.reply-to`. */
  replyAddress: string | undefined;
  private replyConsumer: ((msg: WireMessage | null) => void) | undefined;

  constructor(
    private readonly host: ChannelHost,
    readonly connectionId: number,
    readonly id: number,
    private readonly confirm: boolean,
    /** A hard error (MemoryConnectionError): the connection closes with it, as RabbitMQ's does. */
    private readonly closeConnection: (error: MemoryConnectionError) => void = () => undefined,
  ) {
    super();
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  assertExchange(exchange: string, type: WireExchangeType, options?: WireExchangeOptions): Promise<{ exchange: string }> {
    return this.rpc(() => {
      this.host.assertExchange(exchange, type, options ?? {});
      return { exchange };
    });
  }

  assertQueue(queue: string, options?: WireQueueOptions): Promise<WireQueueInfo> {
    return this.rpc(() => this.host.assertQueue(queue, options ?? {}, this.connectionId));
  }

  checkQueue(queue: string): Promise<WireQueueInfo> {
    return this.rpc(() => this.host.checkQueue(queue, this.connectionId));
  }

  deleteQueue(queue: string): Promise<{ messageCount: number }> {
    return this.rpc(() => ({ messageCount: this.host.deleteQueue(queue) }));
  }

  purgeQueue(queue: string): Promise<{ messageCount: number }> {
    return this.rpc(() => ({ messageCount: this.host.purgeQueue(queue, this.connectionId) }));
  }

  bindQueue(queue: string, exchange: string, pattern: string, args?: Record<string, unknown>): Promise<object> {
    return this.rpc(() => {
      this.host.bindQueue(queue, exchange, pattern, args, this.connectionId);
      return {};
    });
  }

  bindExchange(destination: string, source: string, pattern: string, args?: Record<string, unknown>): Promise<object> {
    return this.rpc(() => {
      this.host.bindExchange(destination, source, pattern, args);
      return {};
    });
  }

  prefetch(count: number, global?: boolean): Promise<object> {
    return this.rpc(() => {
      assertPermittedQos(global);
      this.prefetchCount = count;
      return {};
    });
  }

  publish(exchange: string, routingKey: string, content: Buffer, options?: WirePublishOptions, callback?: Callback): boolean {
    this.assertUsable();
    // Copied now: the publisher may reuse its buffer and header table as soon as publish returns (amqplib has encoded them by then).
    const body = Buffer.from(content);
    let properties = propertiesOf(options);
    const mandatory = options?.mandatory === true;
    this.host.timers.defer(() => {
      if (this.closed) return callback?.(new Error('channel closed'));
      try {
        if (properties.replyTo === directReplyTo) {
          if (!this.replyAddress) throw preconditionFailed('fast reply consumer does not exist');
          properties = { ...properties, replyTo: this.replyAddress };
        }
        const routed = this.host.publish(exchange, routingKey, body, properties);
        if (!routed && mandatory) {
          const returned: WireReturned = { content: body, fields: { exchange, routingKey, replyCode: 312, replyText: 'NO_ROUTE' }, properties: copyProperties(properties) };
          this.emit('return', returned);
        }
        callback?.(null);
      } catch (err) {
        if (!(err instanceof MemoryChannelError)) throw err;
        callback?.(err);
        this.fail(err);
      }
    });
    return true;
  }

  waitForConfirms(): Promise<void> {
    if (!this.confirm) return Promise.reject(new MemoryIllegalOperationError('waitForConfirms on a channel not in confirm mode'));
    // Every publish before this call is settled by the time this job runs (jobs run in call order).
    return new Promise((resolve, reject) => this.host.timers.defer(() => (this.closed ? reject(new Error('channel closed')) : resolve())));
  }

  consume(queue: string, onMessage: (msg: WireMessage | null) => void, options?: WireConsumeOptions): Promise<{ consumerTag: string }> {
    return this.rpc(() => {
      const tag = options?.consumerTag ?? `amq.ctag-${this.connectionId}.${this.id}.${this.consumers.size + 1}.${++this.tagSeq}`;
      if (queue === directReplyTo) {
        if (options?.noAck !== true) throw preconditionFailed('reply consumer cannot acknowledge');
        this.replyAddress = this.host.registerReplyTo(this);
        this.replyConsumer = onMessage;
        return { consumerTag: tag };
      }
      const q = this.host.queueFor(queue, this.connectionId);
      const noAck = options?.noAck === true;
      const consumer: QueueConsumer = {
        tag,
        noAck,
        prefetch: this.prefetchCount,
        unacked: 0,
        deliver: (from, msg) => onMessage(this.delivered(from, msg, consumer)),
        cancelled: () => {
          this.consumers.delete(tag);
          onMessage(null);
        },
      };
      this.consumers.set(tag, { consumer, queue: q });
      q.addConsumer(consumer);
      return { consumerTag: tag };
    });
  }

  cancel(consumerTag: string): Promise<{ consumerTag: string }> {
    return this.rpc(() => {
      const entry = this.consumers.get(consumerTag);
      if (entry) {
        this.consumers.delete(consumerTag);
        entry.queue.removeConsumer(entry.consumer);
      }
      return { consumerTag };
    });
  }

  get(queue: string, options?: { noAck?: boolean }): Promise<WireGetMessage | false> {
    return this.rpc(() => {
      const q = this.host.queueFor(queue, this.connectionId);
      const msg = q.take();
      if (!msg) return false;
      const deliveryTag = ++this.tagSeq;
      if (options?.noAck !== true) this.unacked.set(deliveryTag, { queue: q, msg, consumer: undefined });
      return {
        content: Buffer.from(msg.content),
        fields: { deliveryTag, redelivered: msg.redelivered, exchange: msg.exchange, routingKey: msg.routingKey, messageCount: q.messages.length },
        properties: this.host.deliveredProperties(q, msg),
      };
    });
  }

  ack(message: WireDelivered, allUpTo?: boolean): void {
    this.settle(message.fields.deliveryTag, allUpTo === true, (u) => this.release(u));
  }

  nack(message: WireDelivered, allUpTo?: boolean, requeue?: boolean): void {
    this.settle(message.fields.deliveryTag, allUpTo === true, (u) => this.giveBack(u, requeue !== false));
  }

  reject(message: WireDelivered, requeue?: boolean): void {
    this.settle(message.fields.deliveryTag, false, (u) => this.giveBack(u, requeue !== false));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.reject(new MemoryIllegalOperationError('Channel closed'));
    return new Promise((resolve) =>
      this.host.timers.defer(() => {
        if (!this.closed) this.shut(undefined);
        resolve();
      }),
    );
  }

  /** The connection under it went (closed or lost): the channel closes without an error of its own. */
  connectionClosed(): void {
    if (!this.closed) this.shut(undefined);
  }

  /** A message for this channel's direct reply-to consumer. */
  deliverReply(content: Buffer, routingKey: string, msg: Omit<StoredMessage, 'content'>): void {
    const consumer = this.replyConsumer;
    if (!consumer || this.closed) return;
    consumer({ content, fields: { deliveryTag: ++this.tagSeq, redelivered: false, exchange: msg.exchange, routingKey, consumerTag: 'amq.rabbitmq.reply-to' }, properties: copyProperties(msg.properties) });
  }

  private delivered(queue: MemoryQueue, msg: StoredMessage, consumer: QueueConsumer): WireMessage {
    const deliveryTag = ++this.tagSeq;
    if (!consumer.noAck) {
      consumer.unacked++;
      this.unacked.set(deliveryTag, { queue, msg, consumer });
    }
    return {
      content: Buffer.from(msg.content),
      fields: { deliveryTag, redelivered: msg.redelivered, exchange: msg.exchange, routingKey: msg.routingKey, consumerTag: consumer.tag },
      properties: this.host.deliveredProperties(queue, msg),
    };
  }

  private settle(tag: number, multiple: boolean, apply: (u: Unacked) => void): void {
    this.assertUsable();
    this.host.timers.defer(() => {
      if (this.closed) return;
      if (multiple) {
        for (const [t, u] of [...this.unacked]) {
          if (t > tag) break;
          this.unacked.delete(t);
          apply(u);
        }
        return;
      }
      const u = this.unacked.get(tag);
      if (!u) return this.fail(preconditionFailed(`unknown delivery tag ${tag}`));
      this.unacked.delete(tag);
      apply(u);
    });
  }

  private release(u: Unacked): void {
    if (u.consumer) u.consumer.unacked--;
    u.queue.changed();
  }

  private giveBack(u: Unacked, requeue: boolean): void {
    if (u.consumer) u.consumer.unacked--;
    if (requeue) u.queue.requeue([u.msg]);
    else this.host.deadLetter(u.queue, u.msg, 'rejected');
  }

  private rpc<T>(work: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new MemoryIllegalOperationError('Channel closed'));
    return new Promise<T>((resolve, reject) =>
      this.host.timers.defer(() => {
        if (this.closed) return reject(new MemoryIllegalOperationError('Channel closed'));
        try {
          resolve(work());
        } catch (err) {
          reject(err);
          if (err instanceof MemoryChannelError) this.fail(err);
          else if (err instanceof MemoryConnectionError) this.closeConnection(err);
        }
      }),
    );
  }

  private fail(error: MemoryChannelError): void {
    if (this.closed) return;
    this.shut(error);
  }

  /** Closed: consumers go, unacked messages go back to their queues (redelivered), as when RabbitMQ closes a channel. */
  private shut(error: MemoryChannelError | undefined): void {
    this.closed = true;
    for (const { consumer, queue } of this.consumers.values()) queue.removeConsumer(consumer);
    this.consumers.clear();
    const byQueue = new Map<MemoryQueue, StoredMessage[]>();
    for (const u of this.unacked.values()) {
      if (u.consumer) u.consumer.unacked--;
      const list = byQueue.get(u.queue) ?? [];
      list.push(u.msg);
      byQueue.set(u.queue, list);
    }
    this.unacked.clear();
    for (const [queue, msgs] of byQueue) queue.requeue(msgs);
    if (this.replyAddress) this.host.releaseReplyTo(this.replyAddress);
    this.replyConsumer = undefined;
    this.host.channelClosed(this);
    let thrown: unknown;
    if (error) {
      try {
        this.emit('error', error);
      } catch (err) {
        // No 'error' listener: amqplib throws here too; the close still happens first.
        thrown = err;
      }
    }
    this.emit('close');
    if (thrown !== undefined) throw thrown;
  }

  private assertUsable(): void {
    if (this.closed) throw new MemoryIllegalOperationError('Channel closed');
  }
}
