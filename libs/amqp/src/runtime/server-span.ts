// The worker's span of one delivered request (or notification, consumer kind): started once the request is known to run (not for one
// expired in the queue or unservable), active around its handler so nested calls become its children,
// and ended with what came of the run: the answer's error code, a retry or a takeover as events.
import { context, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { TrackedOutcome } from '@warren/calls';
import { parentContext, startServerSpan, WarrenAttr, WarrenEvent } from '../tracing/call-spans';
import type { DeliveryInfo } from '../wire/delivery';
import { errorCodeIn } from './observe';

/** A delivery, with its span when tracing is on. */
export type TracedDelivery = DeliveryInfo & { readonly span?: Span | undefined };

export interface ServerSpanPlace {
  readonly method: string;
  readonly service: string;
  readonly instanceId: string;
  readonly queue: string;
  /** A notification (a consumer-kind span). @default false */
  readonly notification?: boolean;
}

/** The delivery with its span started (queue wait from `x-warren-sent` to `startedAt`). */
export function tracedDelivery(tracer: Tracer, info: DeliveryInfo, place: ServerSpanPlace, startedAt: number): TracedDelivery {
  const span = startServerSpan(tracer, {
    ...place,
    callId: info.callId,
    attempt: info.attempt,
    queueWaitMs: info.sentAt === undefined ? undefined : startedAt - info.sentAt,
    parent: parentContext(info.traceparent, info.tracestate),
  });
  return { ...info, span };
}

/** Runs `fn` with `span` active: what the handler starts (nested calls, its own spans) is its child. */
export function inSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Marks the run of a call whose previous worker was lost (or gave it back) and that runs here. */
export function markTakeover(span: Span, attempt: number): void {
  span.setAttribute(WarrenAttr.attempt, attempt);
  span.addEvent(WarrenEvent.takeover, { [WarrenAttr.attempt]: attempt });
}

/** Ends the span with the run's outcome; `undefined` when handling the delivery failed. */
export function endServerSpan(span: Span, outcome: TrackedOutcome | undefined, why: 'retryable_error' | 'worker_lost'): void {
  if (outcome === undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'delivery handling failed' });
    span.end();
    return;
  }
  const { settle } = outcome;
  if (outcome.source === 'store') span.addEvent(WarrenEvent.answeredFromStore);
  if (settle.action === 'retry') {
    span.addEvent(WarrenEvent.retry, { 'warren.next_attempt': settle.nextAttempt, 'warren.delay_ms': settle.delayMs, 'warren.reason': why });
  }
  if (settle.action === 'dead-letter') span.setAttribute('warren.dead_letter_reason', settle.reason);
  const code = outcome.reply === undefined ? undefined : errorCodeIn(outcome.reply);
  if (code !== undefined) {
    span.setAttribute(WarrenAttr.errorCode, code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: `JSON-RPC error ${code}` });
  } else if (settle.action === 'retry') span.setStatus({ code: SpanStatusCode.ERROR, message: 'retried' });
  span.end();
}
