// A span around work a composition root does for someone outside (the gateway's HTTP request, an MCP
// tools/call), with the trace options its calls carry: the span's own when tracing is on (so the
// calls become its children), else the incoming `traceparent` and `tracestate` passed through as they came.
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { validTracestate } from '../wire/trace';
import { parentContext, traceparentOf, tracestateOf } from './call-spans';
import { activeTracer } from './tracer';

/** What a call made for the traced work carries (CallOptions' `traceparent` and `tracestate`). */
export interface TraceOptions {
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/** Where the trace context came with the work (HTTP headers, MCP `_meta`): `traceparent` and `tracestate`, either absent or malformed. */
export type IncomingTrace = { readonly [key: string]: unknown };

/**
 * Runs `work` under a server-kind span named `name` (a child of the incoming trace context) and ends
 * it when `work` settles: failed if it throws, else as `work` marked it through `span` (undefined
 * when tracing is off). With no tracer registered it only passes the incoming context on.
 *
 * @example
 * const answer = await traced('POST /rpc', { 'http.request.method': 'POST' }, request.headers, (trace) => client.call('add', [1, 2], trace));
 */
export async function traced<T>(name: string, attributes: Attributes, incoming: IncomingTrace, work: (trace: TraceOptions, span: Span | undefined) => Promise<T>): Promise<T> {
  const traceparent = typeof incoming['traceparent'] === 'string' ? incoming['traceparent'] : undefined;
  const tracestate = validTracestate(typeof incoming['tracestate'] === 'string' ? incoming['tracestate'] : undefined);
  const tracer = activeTracer();
  if (!tracer) return work({ ...(traceparent === undefined ? {} : { traceparent }), ...(tracestate === undefined ? {} : { tracestate }) }, undefined);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parentContext(traceparent, tracestate));
  const state = tracestateOf(span);
  const own: TraceOptions = { traceparent: traceparentOf(span), ...(state === undefined ? {} : { tracestate: state }) };
  try {
    return await context.with(trace.setSpan(context.active(), span), () => work(own, span));
  } catch (err) {
    span.recordException(err instanceof Error ? err : new Error(String(err)));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
