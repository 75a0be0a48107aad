import { setMaxListeners } from 'node:events';
import type { Id, JsonValue, Params } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { CallAbort } from './call-abort';
import type { RpcClient } from '../engine/client';
import type { BatchEntry, BatchResult, CallOptions, NotifyOptions } from '../engine/call-options';
import { Effects, type EffectLedger, type OnceOptions, type OnceResult } from './once';
import { ProgressReporter, type ProgressListener } from '../wire/progress';
import { childTraceparent, parseTraceparent } from '../wire/trace';
import type { Span } from '@opentelemetry/api';
import { traceparentOf } from '../tracing/call-spans';
import type { RunningCall } from '@warren/calls';

/** Everything a handler gets besides its params. Handlers never see amqplib, Redis, or acks. */
export interface HandlerContext {
  /**
   * Cluster-unique call id (the AMQP correlation id). It is the same on every redelivery of the call,
   * so it is the idempotency key for side effects in your own systems: a unique constraint on it, or an
   * outbox row written in the same transaction as the effect (see docs/reliability.md).
   */
  readonly callId: string;
  readonly method: string;
  /** The caller's JSON-RPC id; undefined for notifications. */
  readonly id: Id | undefined;
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  /** Fires at the deadline, on cancellation, or when the service shuts down; `reason` says which. */
  readonly signal: AbortSignal;
  /** 1 on first delivery, higher on redelivery. */
  readonly attempt: number;
  /** W3C traceparent of this call (its worker span's, when tracing is on). */
  readonly traceparent: string;
  /** The W3C tracestate the caller sent along, passed on to nested calls; undefined when none. */
  readonly tracestate: string | undefined;
  readonly service: string;
  readonly instanceId: string;
  /** A child logger bound to this call: `callId`, `method`, and its trace as `trace_id`, `span_id`, `trace_flags`. */
  readonly log: Logger;
  /** Makes nested calls that inherit this call's remaining deadline, trace and cancellation. */
  readonly client: NestedClient;
  /**
   * Runs the side effect `fn` at most once per call, across redeliveries: with tracking, the first
   * run that finishes `fn` stores its result (JSON) in Redis for the call's lifetime, and later runs of
   * the call (a takeover after a worker died) get that result without running `fn`. If a worker died
   * inside `fn`, the next run throws WorkerLostError (-32005, `data.reason: 'effect_interrupted'`)
   * unless `options.recover` resolves it. `fn` gets the effect's idempotency key (`<callId>/<name>`),
   * for systems that take one. Untracked (no Redis, or Redis down): `fn` runs on every run of the call;
   * within one run, `once` of the same name is always run once.
   *
   * @example
   * const charge = await ctx.once('charge', (key) => payments.charge(card, amount, { idempotencyKey: key }));
   */
  once<T extends OnceResult = void>(name: string, fn: (key: string) => T | Promise<T>, options?: OnceOptions<T>): Promise<T>;
  /**
   * Reports how far the call has got (`fraction` 0..1, clamped) and what it is doing. Throttled
   * (at most a few writes a second; the last report is always written), stored on the call's
   * in-flight record when the service is tracked (a no-op for the store without one), and pushed
   * live to a caller that asked for progress (`onProgress`). Never throws for a store failure.
   *
   * @example ctx.progress(step / size, `page ${step} of ${size}`);
   */
  progress(fraction: number, message?: string): void;
}

/** The client a handler uses for nested calls. */
export interface NestedClient {
  call<R = JsonValue>(method: string, params?: Params, opts?: Omit<CallOptions, 'deadline' | 'traceparent' | 'tracestate'>): Promise<R>;
  notify(method: string, params?: Params, opts?: Omit<NotifyOptions, 'traceparent' | 'tracestate'>): Promise<void>;
  batch(entries: readonly BatchEntry[]): Promise<BatchResult[]>;
}

/** Binds a client to a parent call: children cannot outlive the parent and continue its trace. */
export function nestedClient(client: RpcClient, parent: { deadline: number; traceparent: string; tracestate: string | undefined; signal: AbortSignal }): NestedClient {
  const trace = parent.tracestate === undefined ? { traceparent: parent.traceparent } : { traceparent: parent.traceparent, tracestate: parent.tracestate };
  const inherit = (opts: Omit<CallOptions, 'deadline' | 'traceparent' | 'tracestate'> = {}): CallOptions => ({
    ...opts,
    deadline: parent.deadline,
    ...trace,
    signal: opts.signal ? AbortSignal.any([opts.signal, parent.signal]) : parent.signal,
  });
  return {
    call: (method, params, opts) => client.call(method, params, inherit(opts)),
    notify: (method, params, opts) => client.notify(method, params, { ...opts, ...trace }),
    batch: (entries) => client.batch(entries, inherit()),
  };
}

/** What the runtime knows of a call when it builds the handler's context. */
export interface CallFacts {
  readonly callId: string;
  readonly method: string;
  readonly id: Id | undefined;
  readonly deadline: number;
  readonly attempt: number;
  /** The caller's traceparent header, unparsed. */
  readonly parentTrace: string | undefined;
  /** The caller's tracestate header, when well-formed. */
  readonly tracestate?: string | undefined;
  /** The worker's span of this call, when tracing is on: the context's traceparent is its. */
  readonly span?: Span | undefined;
  /** Where `ctx.once` keeps effects across runs (the tracker's); none when untracked. */
  readonly effects?: EffectLedger | undefined;
  /** Where the caller waits for the answer (and, if it asked, progress). */
  readonly replyTo?: string | undefined;
  /** The caller asked for progress pushed to its reply queue. */
  readonly wantsProgress?: boolean;
  /** The call as the tracker knows it, when tracked. */
  readonly tracked?: RunningCall | undefined;
}

/** Where a context gets what it builds on demand. */
export interface ContextOwner {
  readonly service: string;
  readonly instanceId: string;
  readonly log: Logger;
  readonly client: RpcClient;
  /** Where a call's progress goes (reply queue, tracker), built on the call's first report. */
  progressSink(facts: CallFacts): ProgressListener;
}

/**
 * The context handed to a handler. The signal, the span id, the logger and
 * the nested client are each built on first use: most handlers need none of
 * them, and together they would cost more than the rest of the call's
 * bookkeeping.
 */
export class CallContext implements HandlerContext {
  readonly callId: string;
  readonly method: string;
  readonly id: Id | undefined;
  readonly deadline: number;
  readonly attempt: number;
  private span: string | undefined;
  private logger: Logger | undefined;
  private nested: NestedClient | undefined;
  private effects: Effects | undefined;
  private reporter: ProgressReporter | undefined;

  constructor(private readonly facts: CallFacts, private readonly abort: CallAbort, private readonly owner: ContextOwner) {
    this.callId = facts.callId;
    this.method = facts.method;
    this.id = facts.id;
    this.deadline = facts.deadline;
    this.attempt = facts.attempt;
  }

  get service(): string {
    return this.owner.service;
  }

  get instanceId(): string {
    return this.owner.instanceId;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get traceparent(): string {
    return (this.span ??= this.facts.span ? traceparentOf(this.facts.span) : childTraceparent(parseTraceparent(this.facts.parentTrace)));
  }

  get tracestate(): string | undefined {
    return this.facts.tracestate;
  }

  get log(): Logger {
    if (this.logger === undefined) {
      // The names OpenTelemetry's log data model and its pino instrumentation use, so a backend joins lines to spans.
      const trace = parseTraceparent(this.traceparent);
      this.logger = this.owner.log.child({ callId: this.callId, method: this.method, trace_id: trace?.traceId, span_id: trace?.spanId, trace_flags: trace?.flags });
    }
    return this.logger;
  }

  progress(fraction: number, message?: string): void {
    (this.reporter ??= new ProgressReporter(this.owner.progressSink(this.facts))).report(fraction, message);
  }

  /** The call has ended: writes held-back progress now (before the answer) and stops reporting. */
  endProgress(): void {
    this.reporter?.flush();
  }

  get client(): NestedClient {
    if (this.nested === undefined) {
      const signal = this.signal;
      // Each nested call listens on the call's signal; a handler fanning out to many is not a leak.
      setMaxListeners(0, signal);
      this.nested = nestedClient(this.owner.client, { deadline: this.deadline, traceparent: this.traceparent, tracestate: this.tracestate, signal });
    }
    return this.nested;
  }

  once<T extends OnceResult = void>(name: string, fn: (key: string) => T | Promise<T>, options?: OnceOptions<T>): Promise<T> {
    return (this.effects ??= new Effects(this.callId, this.facts.effects)).once(name, fn, options);
  }
}
