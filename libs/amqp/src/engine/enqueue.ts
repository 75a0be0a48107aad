import type { WireConfirmChannel, WirePublishOptions } from '@warren/amqp-transport';
import type { JobStatus, JobStore } from '@warren/calls';
import {
  RpcConnectionLostError, RpcNotConfirmedError, requestMessage, type LocalError, type PendingCalls, type Params, type RequestMessage,
  type ResponseMessage,
} from '@warren/jsonrpc';
import { activeTracer } from '../tracing/tracer';
import { endWithError, endWithResponse, parentContext, startClientSpan, traceparentOf, tracestateOf } from '../tracing/call-spans';
import { Header, protocolMinor, protocolMinorHeader, protocolVersion } from '../wire/headers';
import { assertMethodName, type Names } from '../wire/names';
import { childTraceparent, parseTraceparent, validTracestate } from '../wire/trace';
import type { CallIds } from './call-ids';
import { DelayChain } from './delay-chain';
import { dueAtOf, type DelayOptions } from './delay-options';

/**
 * What `RpcClient.enqueue` takes (docs/jobs.md). A job is a request to its method's queue that
 * nobody waits for: persistent, confirmed by RabbitMQ, without `reply_to`.
 *
 * @example await client.enqueue('report.render', { size: 2 }, { jobId: 'report-7', delayMs: 600_000 })
 */
export interface EnqueueOptions extends DelayOptions {
  /**
   * The job's id, chosen by the caller: enqueueing an id already queued, running, or finished and
   * retained is a no-op that returns `{ duplicate: true }` (with a job store, `useJobStore`). 1 to 128
   * characters of `[A-Za-z0-9_.:-]`, not starting with `-` or `.`.
   * @default a new random id (128 random bits, as call ids)
   */
  readonly jobId?: string;
  /**
   * Time the job has to finish, counted from when it is due: it waits in its queue at most this long
   * (then RabbitMQ dead-letters it), and its handler's signal fires at its end. With a tracker its
   * outcome is kept until this deadline plus the tracker's `resultTtlMs`.
   * @default 3_600_000 (1 h)
   */
  readonly timeoutMs?: number;
  /** Parent trace context (W3C traceparent). @default the active span's, else a new trace */
  readonly traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent`. @default none */
  readonly tracestate?: string;
}

/** What `RpcClient.enqueue` resolves with. */
export interface EnqueuedJob {
  /** The job id (the request's correlation id and JSON-RPC id): what `client.job(id)` and `warren job show` take. */
  readonly id: string;
  /**
   * `true`: the id was taken (its job is queued, running, or finished and retained): nothing was
   * published, and `existing` says where that job is. Only a client with a job store can tell.
   */
  readonly duplicate: boolean;
  /** When it is due, ms since the epoch; absent for a job due now. */
  readonly dueAt?: number;
  /** Its deadline, ms since the epoch (this job's; a duplicate's is in `existing`). */
  readonly deadline: number;
  /** A duplicate's job, as the store has it (absent when the store could not say). */
  readonly existing?: JobStatus;
}

/** A job's default time to finish, from when it is due. */
export const defaultJobTimeoutMs = 3_600_000;

/** A caller's job id: safe as a correlation id, a Redis hash tag and a CLI argument. */
const jobIdPattern = /^[A-Za-z0-9_:][A-Za-z0-9_.:-]{0,127}$/;

export interface JobSenderDeps {
  readonly n: Names;
  readonly ids: CallIds;
  /** The client's pending table: a job waits there for its confirm, so a mandatory return fails it as it fails a call. */
  readonly pending: PendingCalls<string, ResponseMessage>;
  readonly channel: () => WireConfirmChannel | undefined;
  /** Ids RabbitMQ returned whose explanation is still coming: their confirm settles nothing (the return fails them). */
  readonly explaining: ReadonlySet<string>;
  /** Holds a publish while disconnected (the offline buffer), or fails it (closing, buffer full). */
  readonly holdOrFail: (publish: () => void, fail: (err: LocalError) => void) => void;
  /** The client's encoding of a body (and its size check: RpcTooLargeError). */
  readonly encode: (message: RequestMessage) => Buffer;
  /** How long RabbitMQ's confirm may take. */
  readonly confirmTimeoutMs: number;
}

/** What the client's confirm of a job resolves its pending entry with (never seen by a caller). */
const confirmedJob: ResponseMessage = { jsonrpc: '2.0', result: null, id: null };

/**
 * How an RpcClient enqueues jobs and looks them up (docs/jobs.md): the id reserved in the job store
 * first (when there is one), then the request published persistent and mandatory, without
 * `reply_to`, straight to the request exchange or through the delay chain, and awaited until
 * RabbitMQ confirms it. A publish that fails (returned: no queue bound; nacked; lost) drops the
 * reservation again, so enqueueing the same id again publishes it. Nothing here runs per call.
 */
export class JobSender {
  private store: JobStore | undefined;
  private readonly delay: DelayChain;

  constructor(private readonly d: JobSenderDeps) {
    this.delay = new DelayChain(d.n);
  }

  use(store: JobStore | undefined): void {
    this.store = store;
  }

  async enqueue(method: string, params: Params | undefined, opts: EnqueueOptions): Promise<EnqueuedJob> {
    assertMethodName(method);
    if (opts.jobId !== undefined && (typeof opts.jobId !== 'string' || !jobIdPattern.test(opts.jobId))) throw new TypeError(`jobId must match ${jobIdPattern.source}, got ${JSON.stringify(opts.jobId)}`);
    const timeoutMs = opts.timeoutMs ?? defaultJobTimeoutMs;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`timeoutMs must be a positive integer, got ${String(timeoutMs)}`);
    const now = Date.now();
    const dueAt = dueAtOf(opts, now);
    const deadline = (dueAt ?? now) + timeoutMs;
    const id = opts.jobId ?? this.d.ids.fresh();
    const body = this.d.encode(requestMessage(method, params, id));
    const due = dueAt === undefined ? {} : { dueAt };
    const store = this.store;
    if (store && !(await store.reserve({ callId: id, method, id, deadline, ...due }))) {
      const existing = await store.status(id).catch(() => undefined);
      return { id, duplicate: true, deadline, ...due, ...(existing === undefined ? {} : { existing }) };
    }
    // Without a store, one client still never has two enqueues of one id on the wire at once.
    if (this.d.pending.has(id)) return { id, duplicate: true, deadline, ...due };
    try {
      await this.publish({ id, method, body, deadline, dueAt, traceparent: opts.traceparent, tracestate: opts.tracestate });
    } catch (err) {
      // Not published (or not known to be): the id is free again, and a tracked worker runs a second copy at most once.
      if (store) await store.release(id);
      throw err;
    }
    return { id, duplicate: false, deadline, ...due };
  }

  /** A job's state and outcome from the job store. */
  status(id: string): Promise<JobStatus> {
    if (!this.store) return Promise.reject(new TypeError('no job store: give the client one with useJobStore (docs/jobs.md)'));
    return this.store.status(id);
  }

  private publish(job: { readonly id: string; readonly method: string; readonly body: Buffer; readonly deadline: number; readonly dueAt: number | undefined; readonly traceparent: string | undefined; readonly tracestate: string | undefined }): Promise<ResponseMessage> {
    const { pending, n } = this.d;
    const tracer = activeTracer();
    const span = tracer ? startClientSpan(tracer, { method: job.method, callId: job.id, exchange: n.requestExchange, id: job.id, parent: parentContext(job.traceparent, validTracestate(job.tracestate)) }) : undefined;
    const traceparent = span ? traceparentOf(span) : childTraceparent(parseTraceparent(job.traceparent));
    const tracestate = span ? tracestateOf(span) : validTracestate(job.tracestate);
    const confirmed = pending.add(job.id, { timeoutMs: this.d.confirmTimeoutMs });
    if (span) confirmed.then((response) => endWithResponse(span, response), (err: unknown) => endWithError(span, err));
    const headers: Record<string, number | string> = {
      [Header.protocol]: protocolVersion, [protocolMinorHeader]: protocolMinor, [Header.deadline]: job.deadline, [Header.traceparent]: traceparent,
      [Header.sentAt]: Date.now(), ...(tracestate === undefined ? {} : { [Header.tracestate]: tracestate }),
    };
    const send = (): void => {
      if (!pending.has(job.id)) return; // timed out while held
      const ch = this.d.channel();
      if (!ch) return this.d.holdOrFail(send, (err) => pending.reject(job.id, err));
      const props: WirePublishOptions = {
        mandatory: true, persistent: true, contentType: 'application/json', correlationId: job.id, headers,
        // The queue drops (dead-letters) a job nobody took before its deadline.
        expiration: String(Math.max(1, job.deadline - Date.now())),
      };
      const settle = (err: unknown): void => {
        // A return (no queue bound) comes before the confirm: it has settled the entry already, or will once explained.
        if (!err) return void (this.d.explaining.has(job.id) || pending.resolve(job.id, confirmedJob));
        queueMicrotask(() => pending.reject(job.id, this.d.channel() === ch ? new RpcNotConfirmedError('not_confirmed', { cause: err }) : new RpcConnectionLostError('unconfirmed_at_disconnect', { cause: err })));
      };
      try {
        if (job.dueAt !== undefined && job.dueAt > Date.now()) this.delay.publish(ch, 'call', job.method, job.body, props, job.dueAt, settle);
        else ch.publish(n.requestExchange, job.method, job.body, props, (err) => settle(err ?? undefined));
      } catch (err) {
        pending.reject(job.id, new RpcNotConfirmedError('publish_failed', { cause: err }));
      }
    };
    send();
    return confirmed;
  }
}
