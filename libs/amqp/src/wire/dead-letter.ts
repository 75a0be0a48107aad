import { randomBytes } from 'node:crypto';
import type { WireChannel, WireMessage } from '@warren/amqp-transport';
import { Header, int64 } from './headers';
import { carriedHeaders, copyProperties } from './republish';

/**
 * Why a request was dead-lettered, carried as headers on its copy in the service's dead-letter queue
 * (docs/protocol-jobs.md, "Dead letters"), so `dlq.list` can say why without guessing.
 */
export interface DeadLetterReason {
  /** A short word: `worker_lost`, `retries_exhausted`, `unservable`, `handler_crashed`, ... */
  readonly reason: string;
  /** The JSON-RPC error code the caller was answered with, if any. */
  readonly code?: number;
  /** How many attempts ran before it was given up. */
  readonly attempts: number;
}

/** Headers Warren adds when it dead-letters a request itself. */
export const DeadHeader = {
  id: 'x-warren-dead-id',
  reason: 'x-warren-dead-reason',
  code: 'x-warren-dead-code',
  attempts: 'x-warren-dead-attempts',
  at: 'x-warren-dead-at',
} as const;

/**
 * Publishes a copy of `msg` to the dead-letter exchange with the reason headers, then acks the
 * original: in that order on one channel, so a crash in between redelivers rather than loses it.
 * The copy drops `expiration` (as RabbitMQ does when it dead-letters), so it is kept until replayed,
 * purged or pushed out by the queue's length bound, and `x-death` (any publisher can forge it, and
 * RabbitMQ 3.10 crashes the queue on a malformed one).
 */
export function forwardDeadLetter(ch: WireChannel, exchange: string, routingKey: string, msg: WireMessage, why: DeadLetterReason, now = Date.now()): void {
  const kept = carriedHeaders(msg.properties.headers);
  kept[DeadHeader.id] = randomBytes(8).toString('hex');
  kept[DeadHeader.reason] = why.reason;
  if (why.code !== undefined) kept[DeadHeader.code] = int64(why.code);
  kept[DeadHeader.attempts] = int64(why.attempts);
  kept[DeadHeader.at] = int64(now);
  ch.publish(exchange, routingKey, msg.content, copyProperties(msg.properties, kept));
  ch.ack(msg);
}

/**
 * True when `x-death` is a list holding anything but tables: RabbitMQ 3.10 crashes the queue process
 * (losing transient messages in it) when it dead-letters such a message itself, and any publisher can
 * set the header. {@link forwardDeadLetter} drops it; the service logs that it did.
 */
export function forgedDeathHeader(msg: WireMessage): boolean {
  const value = (msg.properties.headers as Record<string, unknown> | undefined)?.[Header.death];
  return Array.isArray(value) && value.some((e) => typeof e !== 'object' || e === null || Array.isArray(e) || Buffer.isBuffer(e));
}
