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

/** How many method names the once-per-method warning remembers; past it, every such notification is logged at debug. */
const maxWarnedMethods = 1000;

/**
 * How an RpcClient publishes a notification (an event): to the events exchange, mandatory, with its
 * span, confirmed. One RabbitMQ returned (no queue bound for it: no subscriber, so it is dropped) is
 * logged as a warning naming `enqueue` (once per method), the way to queue work on a method's queue, or, with
 * `ifUnrouted: 'fail'`, rejected with RpcNoRouteError (-32601) once confirmed.
 */
export class Notifier {
  /** Methods already warned about: the warning is logged once per method. */
  private readonly warned = new Set<string>();

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
    // Once per method (a gateway relays untrusted names: no log line per message), at debug after that.
    const first = !this.warned.has(method) && this.warned.size < maxWarnedMethods;
    if (first) this.warned.add(method);
    this.d.log[first ? 'warn' : 'debug']({ method }, 'notification reached no subscriber (no queue is bound for it on the events exchange): dropped; to queue a job on a method, use enqueue (docs/jobs.md)');
  }
}
