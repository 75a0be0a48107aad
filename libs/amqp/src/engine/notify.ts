import { RpcNoRouteError } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { activeTracer } from '../tracing/tracer';
import { endWithError, endWithResponse, parentContext, startClientSpan, traceparentOf, tracestateOf } from '../tracing/call-spans';
import type { Names } from '../wire/names';
import { childTraceparent, parseTraceparent, validTracestate } from '../wire/trace';
import type { CallIds } from './call-ids';
import type { NotifyOptions } from './call-options';
import type { ClientOutbox } from './client-outbox';
import { dueAtOf } from './delay-options';

export interface NotifierDeps {
  readonly n: Names;
  readonly ids: CallIds;
  readonly outbox: ClientOutbox;
  readonly log: Logger;
  /** The client's `persistent` default. */
  readonly persistent: boolean;
  /** The client's `defaultTimeoutMs`: how long a confirm may take when the caller gives none. */
  readonly defaultTimeoutMs: number;
}

/**
 * How an RpcClient publishes a notification (an event): to the events exchange, mandatory, with its
 * span, confirmed. One RabbitMQ returned (no queue bound for it: no subscriber, so it is dropped) is
 * logged as a warning naming `enqueue`, the way to queue work on a method's queue, or, with
 * `ifUnrouted: 'fail'`, rejected with RpcNoRouteError (-32601) once confirmed.
 */
export class Notifier {
  constructor(private readonly d: NotifierDeps) {}

  async send(method: string, body: Buffer, opts: NotifyOptions): Promise<void> {
    const { n, outbox } = this.d;
    const messageId = this.d.ids.fresh();
    const tracer = activeTracer();
    const span = tracer ? startClientSpan(tracer, { method, callId: messageId, exchange: n.eventExchange, id: undefined, parent: parentContext(opts.traceparent, validTracestate(opts.tracestate)) }) : undefined;
    const traceparent = span ? traceparentOf(span) : childTraceparent(parseTraceparent(opts.traceparent));
    const tracestate = span ? tracestateOf(span) : validTracestate(opts.tracestate);
    const persistent = opts.persistent ?? this.d.persistent;
    const confirmed = outbox.notification({ method, messageId, body, traceparent, tracestate, persistent, dueAt: dueAtOf(opts, Date.now()), timeoutMs: opts.timeoutMs ?? this.d.defaultTimeoutMs });
    if (span) confirmed.then(() => endWithResponse(span, undefined), (err: unknown) => endWithError(span, err));
    if ((await confirmed) !== false) return;
    if (opts.ifUnrouted === 'fail') throw new RpcNoRouteError(method);
    this.d.log.warn({ method }, 'notification reached no subscriber (no queue is bound for it on the events exchange): dropped; to queue a job on a method, use enqueue (docs/jobs.md)');
  }
}
