import type { WireMessage } from '@warren/amqp-transport';
import { Header, deadlineHeader, numberHeader, stringHeader } from './headers';
import { progressHeader } from './progress';
import { validTracestate } from './trace';

/** What the runtime reads off an AMQP delivery, in Warren's terms. */
export interface DeliveryInfo {
  readonly callId: string;
  readonly replyTo: string | undefined;
  readonly deadline: number;
  readonly hasDeadlineHeader: boolean;
  readonly traceparent: string | undefined;
  /** The W3C `tracestate` that came with `traceparent`, when well-formed. */
  readonly tracestate: string | undefined;
  /** When the caller first published it (`x-warren-sent`), ms since the epoch; undefined if it did not say. */
  readonly sentAt: number | undefined;
  /** 1 on first delivery. Quorum queues count exactly; classic ones only say "redelivered". */
  readonly attempt: number;
  /**
   * RabbitMQ delivers this message for the first time (`redelivered` false, no delivery count), it is no
   * retry, and it has a `reply_to` (a call, not a job): no run of this call can have started anywhere before.
   */
  readonly firstDelivery: boolean;
  /** RabbitMQ delivers this message again (a worker before this one had it and lost it, or gave it back). */
  readonly redelivered: boolean;
  /** The caller asked for progress messages on its reply queue. */
  readonly wantsProgress: boolean;
}

export function readDelivery(msg: WireMessage, defaultTimeoutMs: number, now = Date.now()): DeliveryInfo {
  const p = msg.properties;
  const headers = p.headers as Record<string, unknown> | undefined;
  const deadline = deadlineHeader(headers);
  const deliveryCount = numberHeader(headers, Header.deliveryCount);
  // A retried request (retry.ts) carries the attempt it is on; redeliveries of it count on top.
  const retried = numberHeader(headers, Header.attempt);
  const base = retried !== undefined && Number.isSafeInteger(retried) && retried >= 1 && retried <= 100 ? retried - 1 : 0;
  const callId = typeof p.correlationId === 'string' && p.correlationId.length > 0 ? p.correlationId : typeof p.messageId === 'string' && p.messageId.length > 0 ? p.messageId : `anon.${msg.fields.deliveryTag}.${now}`;
  const replyTo = typeof p.replyTo === 'string' && p.replyTo.length > 0 ? p.replyTo : undefined;
  return {
    callId,
    replyTo,
    deadline: deadline ?? now + defaultTimeoutMs,
    hasDeadlineHeader: deadline !== undefined,
    traceparent: stringHeader(headers, Header.traceparent),
    tracestate: validTracestate(stringHeader(headers, Header.tracestate)),
    sentAt: numberHeader(headers, Header.sentAt),
    // Quorum queues count deliveries; on a classic queue the header is whatever the publisher put there, so a count
    // that is not a whole number >= 0 is ignored rather than turned into attempt 0, -4 or 2.5.
    wantsProgress: numberHeader(headers, progressHeader) === 1,
    redelivered: msg.fields.redelivered || (deliveryCount !== undefined && deliveryCount > 0),
    // A one-way request (no reply_to: an enqueued job) may have a copy under its id, sent again after a publish whose
    // confirm was lost, or enqueued by a client without a job store: never first, so a tracked worker awaits its claim.
    firstDelivery: base === 0 && replyTo !== undefined && !msg.fields.redelivered && (deliveryCount === undefined || deliveryCount === 0),
    attempt: base + (deliveryCount !== undefined && Number.isSafeInteger(deliveryCount) && deliveryCount >= 0 ? deliveryCount + 1 : msg.fields.redelivered ? 2 : 1),
  };
}
