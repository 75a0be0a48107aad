import type { WireQueueOptions } from '../contract';
import type { StoredMessage } from './message';
import type { BrokerTimers } from './timers';

/** Why a queue gives a message up to its dead-letter exchange (the `reason` in x-death). */
export type DeathReason = 'rejected' | 'expired' | 'maxlen' | 'delivery_limit';

/** One basic.consume on a queue. */
export interface QueueConsumer {
  readonly tag: string;
  readonly noAck: boolean;
  /** Most unacked deliveries at once; 0 is no limit. */
  readonly prefetch: number;
  unacked: number;
  /** Hands a message over (the channel numbers it and calls the consumer's callback). */
  deliver(queue: MemoryQueue, msg: StoredMessage): void;
  /** The broker cancelled the consumer (its queue was deleted): the callback gets null. */
  cancelled(): void;
}

/** What a queue needs from its broker. */
export interface QueueHost {
  readonly timers: BrokerTimers;
  deadLetter(queue: MemoryQueue, msg: StoredMessage, reason: DeathReason): void;
  deleteQueue(name: string): void;
}

/** The x-arguments Warren declares, read once. */
export interface QueueArgs {
  readonly messageTtl: number | undefined;
  readonly expires: number | undefined;
  readonly deadLetterExchange: string | undefined;
  readonly deadLetterRoutingKey: string | undefined;
  readonly maxLength: number | undefined;
  readonly quorum: boolean;
  readonly deliveryLimit: number | undefined;
}

/** The delivery limit RabbitMQ 4.0 and later put on a quorum queue declared without `x-delivery-limit`. */
export const defaultQuorumDeliveryLimit = 20;

/** RabbitMQ 4.0+: 20 unless one is set, and a negative limit means none (a policy's limit is not modelled). */
function deliveryLimitOf(declared: number | undefined, quorum: boolean): number | undefined {
  if (!quorum) return undefined;
  if (declared === undefined) return defaultQuorumDeliveryLimit;
  return declared < 0 ? undefined : declared;
}

export function readArgs(args: Record<string, unknown> | undefined): QueueArgs {
  const num = (k: string): number | undefined => (typeof args?.[k] === 'number' ? (args[k] as number) : undefined);
  const str = (k: string): string | undefined => (typeof args?.[k] === 'string' ? (args[k] as string) : undefined);
  return {
    messageTtl: num('x-message-ttl'),
    expires: num('x-expires'),
    deadLetterExchange: str('x-dead-letter-exchange'),
    deadLetterRoutingKey: str('x-dead-letter-routing-key'),
    maxLength: num('x-max-length'),
    quorum: args?.['x-queue-type'] === 'quorum',
    deliveryLimit: deliveryLimitOf(num('x-delivery-limit'), args?.['x-queue-type'] === 'quorum'),
  };
}

/**
 * A queue: ready messages in order, consumers served round-robin within
 * their prefetch, head-of-queue expiry (as RabbitMQ's classic queues do), a
 * length bound that drops (dead-letters) the oldest, and x-expires.
 */
export class MemoryQueue {
  readonly messages: StoredMessage[] = [];
  readonly consumers: QueueConsumer[] = [];
  readonly args: QueueArgs;
  private next = 0;
  private hadConsumer = false;
  private drainQueued = false;
  private expiryTimer: NodeJS.Timeout | undefined;
  private unusedTimer: NodeJS.Timeout | undefined;
  deleted = false;

  constructor(
    readonly name: string,
    readonly options: WireQueueOptions,
    /** Connection id of an exclusive queue's owner. */
    readonly owner: number | undefined,
    private readonly host: QueueHost,
  ) {
    this.args = readArgs(options.arguments);
    this.touch();
  }

  get durable(): boolean {
    return this.options.durable ?? true;
  }

  enqueue(msg: StoredMessage): void {
    this.messages.push(msg);
    const max = this.args.maxLength;
    // drop-head, RabbitMQ's default overflow: the oldest go (dead-lettered as maxlen).
    while (max !== undefined && this.messages.length > max) this.host.deadLetter(this, this.messages.shift() as StoredMessage, 'maxlen');
    this.changed();
  }

  /** Puts nacked or orphaned messages back at the head, in their original order, marked redelivered. */
  requeue(msgs: readonly StoredMessage[]): void {
    if (this.deleted) return;
    const back: StoredMessage[] = [];
    for (const msg of msgs) {
      msg.redelivered = true;
      msg.returns++;
      if (this.args.quorum && this.args.deliveryLimit !== undefined && msg.returns > this.args.deliveryLimit) this.host.deadLetter(this, msg, 'delivery_limit');
      else back.push(msg);
    }
    this.messages.unshift(...back);
    this.changed();
  }

  /** basic.get: the head message, if any (expired ones are dropped first). */
  take(): StoredMessage | undefined {
    this.touch();
    this.expire();
    const msg = this.messages.shift();
    this.changed();
    return msg;
  }

  purge(): number {
    const n = this.messages.length;
    this.messages.length = 0;
    this.changed();
    return n;
  }

  addConsumer(consumer: QueueConsumer): void {
    this.consumers.push(consumer);
    this.hadConsumer = true;
    this.touch();
    this.changed();
  }

  removeConsumer(consumer: QueueConsumer): void {
    const i = this.consumers.indexOf(consumer);
    if (i < 0) return;
    this.consumers.splice(i, 1);
    if (this.next > i) this.next--;
    if (this.options.autoDelete && this.hadConsumer && this.consumers.length === 0) return this.host.deleteQueue(this.name);
    this.touch();
  }

  /** A consumer acked: it may take more. */
  changed(): void {
    if (this.drainQueued || this.deleted) return;
    this.drainQueued = true;
    this.host.timers.defer(() => {
      this.drainQueued = false;
      this.drain();
    });
  }

  /** Used again (declared, consumed, fetched): x-expires starts over, and is suspended while it has consumers. */
  touch(): void {
    this.host.timers.clear(this.unusedTimer);
    this.unusedTimer = undefined;
    const ms = this.args.expires;
    if (ms === undefined || this.deleted || this.consumers.length > 0) return;
    this.unusedTimer = this.host.timers.after(ms, () => this.host.deleteQueue(this.name));
  }

  /** Drops its timers; consumers are told by the broker. */
  dispose(): void {
    this.deleted = true;
    this.host.timers.clear(this.unusedTimer);
    this.host.timers.clear(this.expiryTimer);
  }

  private drain(): void {
    if (this.deleted) return;
    this.expire();
    const errors: unknown[] = [];
    while (this.messages.length > 0) {
      const consumer = this.pick();
      if (!consumer) break;
      const msg = this.messages.shift() as StoredMessage;
      try {
        consumer.deliver(this, msg);
      } catch (err) {
        errors.push(err);
      }
      if (this.deleted) break;
    }
    this.scheduleExpiry();
    // A consumer callback that throws is the consumer's bug; it is surfaced (unhandled), not swallowed.
    if (errors.length > 0) throw errors[0];
  }

  private pick(): QueueConsumer | undefined {
    const n = this.consumers.length;
    for (let k = 0; k < n; k++) {
      const c = this.consumers[(this.next + k) % n] as QueueConsumer;
      if (hasRoom(c)) {
        this.next = (this.next + k + 1) % n;
        return c;
      }
    }
    return undefined;
  }

  /** Dead-letters (or drops) expired messages at the head; a TTL of 0 expires when no consumer can take it now. */
  private expire(): void {
    const now = Date.now();
    while (this.messages.length > 0) {
      const head = this.messages[0] as StoredMessage;
      if (head.expiresAt === undefined) break;
      const zeroTtlUnwanted = head.expiresAt <= now && !this.consumers.some(hasRoom);
      if (head.expiresAt < now || zeroTtlUnwanted) this.host.deadLetter(this, this.messages.shift() as StoredMessage, 'expired');
      else break;
    }
  }

  private scheduleExpiry(): void {
    this.host.timers.clear(this.expiryTimer);
    this.expiryTimer = undefined;
    const head = this.messages[0];
    if (head?.expiresAt === undefined || this.deleted) return;
    this.expiryTimer = this.host.timers.after(Math.max(0, head.expiresAt - Date.now()) + 1, () => {
      this.expiryTimer = undefined;
      this.drain();
    });
  }
}

function hasRoom(c: QueueConsumer): boolean {
  return c.noAck || c.prefetch === 0 || c.unacked < c.prefetch;
}
