// The spans of a call, named and attributed as OpenTelemetry's messaging and RPC semantic conventions
// say (docs/observability.md, "Tracing", has the table): the caller's (client kind), the worker's
// (server kind), each with `messaging.system=rabbitmq`, the destination, the operation, the call id
// as `messaging.message.id`, and `rpc.system=jsonrpc` with `rpc.method`. Only called with a tracer.
import { SpanKind, SpanStatusCode, context, createTraceState, trace, type Attributes, type Context, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import { isErrorResponse, type Id, type ResponseMessage } from '@warren/jsonrpc';
import { parseTraceparent } from '../wire/trace';

/** Attribute names Warren sets beyond the semantic conventions. */
export const WarrenAttr = {
  /** Which run of the call this is (1 on the first; a retry or a takeover counts up). */
  attempt: 'warren.attempt',
  /** The caller's publish (`x-warren-sent`) to this delivery, in milliseconds (clamped at 0). */
  queueWaitMs: 'warren.queue_wait_ms',
  /** The instance that handled the call. */
  instanceId: 'warren.instance_id',
  /** The JSON-RPC error code the call was answered with. */
  errorCode: 'rpc.jsonrpc.error_code',
} as const;

/** The events a worker's span records. */
export const WarrenEvent = {
  /** The call failed with a retryable error (or its worker was lost) and goes to a delay queue for another attempt. */
  retry: 'warren.retry',
  /** RabbitMQ redelivered the call (its previous worker was lost or gave it back) and this instance runs it. */
  takeover: 'warren.takeover',
  /** The tracker answered from the store what an earlier run stored, without running the handler. */
  answeredFromStore: 'warren.answered_from_store',
} as const;

/**
 * The context a call's span starts under: the `traceparent` (with its `tracestate`) the caller gave, as a
 * remote parent, else whatever span is active here (a handler's, an HTTP request's), else a new trace.
 */
export function parentContext(traceparent: string | undefined, tracestate: string | undefined): Context {
  const active = context.active();
  const parsed = parseTraceparent(traceparent);
  if (!parsed) return active;
  const parent: SpanContext = {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    traceFlags: Number.parseInt(parsed.flags, 16) & 0xff,
    isRemote: true,
    ...(tracestate === undefined ? {} : { traceState: createTraceState(tracestate) }),
  };
  return trace.setSpanContext(active, parent);
}

/** A span's context as the `traceparent` header that carries it. */
export function traceparentOf(span: Span): string {
  const sc = span.spanContext();
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A span's `tracestate`, as its header; undefined when it has none. */
export function tracestateOf(span: Span): string | undefined {
  const state = span.spanContext().traceState?.serialize();
  return state ? state : undefined;
}

/** The conventions' attributes both sides of a call carry: the messaging system and operation, the call id, the RPC method. */
function callAttributes(method: string, callId: string, destination: string, type: 'send' | 'process', operation: 'publish' | 'process'): Attributes {
  return {
    'messaging.system': 'rabbitmq',
    'messaging.destination.name': destination,
    'messaging.rabbitmq.destination.routing_key': method,
    'messaging.operation.type': type,
    'messaging.operation.name': operation,
    'messaging.message.id': callId,
    'rpc.system': 'jsonrpc',
    'rpc.method': method,
  };
}

export interface ClientSpanFacts {
  readonly method: string;
  readonly callId: string;
  /** The exchange the request is published to. */
  readonly exchange: string;
  /** The JSON-RPC id in the body; undefined for a notification. */
  readonly id: Id | undefined;
  readonly parent: Context;
}

/** The caller's span of a request (`publish`, client kind) or a notification (`publish`, producer kind). */
export function startClientSpan(tracer: Tracer, f: ClientSpanFacts): Span {
  return tracer.startSpan(f.method, {
    kind: f.id === undefined ? SpanKind.PRODUCER : SpanKind.CLIENT,
    attributes: {
      ...callAttributes(f.method, f.callId, f.exchange, 'send', 'publish'),
      'rpc.jsonrpc.version': '2.0',
      ...(f.id === undefined || f.id === null ? {} : { 'rpc.jsonrpc.request_id': String(f.id) }),
    },
  }, f.parent);
}

export interface ServerSpanFacts {
  /** The method, or `batch` for a batch request. */
  readonly method: string;
  readonly callId: string;
  readonly service: string;
  readonly instanceId: string;
  /** The queue the request was consumed from (for a notification, the exchange it was published to). */
  readonly queue: string;
  /** A notification: a consumer-kind span (nobody waits for an answer). @default false */
  readonly notification?: boolean;
  readonly attempt: number;
  readonly queueWaitMs: number | undefined;
  readonly parent: Context;
}

/** The worker's span of a delivered request (`process`, server kind) or notification (consumer kind). */
export function startServerSpan(tracer: Tracer, f: ServerSpanFacts): Span {
  return tracer.startSpan(f.method, {
    kind: f.notification === true ? SpanKind.CONSUMER : SpanKind.SERVER,
    attributes: {
      ...callAttributes(f.method, f.callId, f.queue, 'process', 'process'),
      'rpc.service': f.service,
      [WarrenAttr.instanceId]: f.instanceId,
      [WarrenAttr.attempt]: f.attempt,
      ...(f.queueWaitMs === undefined ? {} : { [WarrenAttr.queueWaitMs]: Math.max(0, f.queueWaitMs) }),
    },
  }, f.parent);
}

/** Ends a span with what the call was answered: an error answer marks it failed with its code. */
export function endWithResponse(span: Span, response: ResponseMessage | undefined): void {
  if (response !== undefined && isErrorResponse(response)) {
    span.setAttribute(WarrenAttr.errorCode, response.error.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: response.error.message });
  }
  span.end();
}

/** Ends a span whose call failed here (a local error: timeout, no route, lost connection...) or with a thrown JSON-RPC error. */
export function endWithError(span: Span, error: unknown): void {
  const err = error instanceof Error ? error : new Error(String(error));
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number') span.setAttribute(WarrenAttr.errorCode, code);
  else if (typeof code === 'string') span.setAttribute('error.type', code);
  span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  span.end();
}
