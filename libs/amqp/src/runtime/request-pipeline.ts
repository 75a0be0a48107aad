import type { WireChannel, WireMessage } from '@warren/amqp-transport';
import {
  CancelledError, DeadlineExceededError, ErrorCode, JsonRpcError, ShuttingDownError, badPayloadAnswer, decode, isErrorResponse,
  type Decoded, type Dispatcher, type NotificationMessage, type RequestMessage, type ResolvedDecodeLimits, type ResponseMessage,
} from '@warren/jsonrpc';
import { outcomeOf, type CallTracker, type Executed, type RunInfo, type RunningCall, type TrackedOutcome } from '@warren/calls';
import type { Logger } from '@warren/logger';
import { CallAbort } from './call-abort';
import { CallContext, type CallFacts, type ContextOwner, type HandlerContext } from './context';
import { deadReason, type DeliverySettlement } from './delivery-settlement';
import { encodeAnswer } from './handler-errors';
import { expiredResponse } from './late-answer';
import type { MethodRetries } from './method-retries';
import { observeSettled } from './observe';
import type { EffectLedger } from './once';
import { endServerSpan, inSpan, markTakeover, tracedDelivery, type TracedDelivery } from './server-span';
import type { ResolvedServiceOptions } from './service-options';
import type { ServiceStats } from './service-stats';
import type { SuspectLane } from './suspect-lane';
import { activeTracer } from '../tracing/tracer';
import { readDelivery, type DeliveryInfo } from '../wire/delivery';
import type { Names } from '../wire/names';
import { parseTraceparent } from '../wire/trace';
import type { CancelReceiver } from '../wire/wire-cancel';

/** What a service's pipelines (requests here, notifications in notification-delivery.ts) share with it. */
export interface PipelineDeps {
  readonly o: ResolvedServiceOptions;
  readonly n: Names;
  readonly log: Logger;
  readonly limits: ResolvedDecodeLimits;
  readonly dispatcher: Dispatcher<HandlerContext>;
  /** The abort of each call running now, by its delivery: shutdown aborts what outlives the grace period. */
  readonly running: Map<WireMessage, CallAbort>;
  /** Runs a call whose previous worker died alone here (suspect-lane.ts); the tracker claims through it. */
  readonly lane: SuspectLane;
  readonly cancels: CancelReceiver;
  readonly counters: ServiceStats;
  readonly retries: MethodRetries;
  readonly settlement: DeliverySettlement;
  /** What every handler context of this service shares. */
  readonly owner: ContextOwner;
}

/** Sentinel a race returns when the call's signal fired first. */
const aborted = Symbol('aborted');

const requeued: Executed = { kind: 'requeue' };
/** A batch of notifications: nothing to answer. */
const nothing: Executed = { kind: 'answer', text: undefined, response: undefined };

/**
 * A service's request pipeline: a delivery from its request queue read, run (through the tracker
 * when it tracks the call, in the suspect lane's way when the instance has one), answered on the
 * caller's reply queue and settled, acked only after the reply is published.
 */
export class RequestPipeline {
  constructor(private readonly d: PipelineDeps) {}

  async handle(ch: WireChannel, msg: WireMessage): Promise<void> {
    const { o, counters, settlement } = this.d;
    const info = readDelivery(msg, o.defaultTimeoutMs);
    const startedAt = Date.now();
    if (info.deadline <= startedAt) {
      // Nobody waits for this answer any more; running it now would be work done for nothing. The answer is for a
      // caller whose deadline was wrong (in seconds, say), so its mistake is not a silent wait.
      counters.expired++;
      if (o.observer) observeSettled(o.observer, { method: this.methodLabel(methodOf(msg.content)), outcome: 'expired' }, info, startedAt);
      const late = info.replyTo ? expiredResponse(decode(msg.content, this.d.limits)) : undefined;
      if (late) settlement.reply(info, late);
      settlement.settle(ch, msg, 'ack');
      return;
    }
    const decoded = decode(msg.content, this.d.limits);
    const unservable = this.d.cancels.cancelledBeforeStart(info.callId) ? cancelledResponse(decoded) : badPayloadAnswer(decoded);
    if (unservable) {
      if (info.replyTo) settlement.reply(info, unservable);
      const cancelled = 'error' in unservable && unservable.error.code === ErrorCode.Cancelled;
      if (cancelled) counters.answered++;
      else counters.deadLettered++;
      if (o.observer) observeSettled(o.observer, { method: this.methodLabel(singleRequest(decoded)?.method), outcome: cancelled ? 'error' : 'dead_lettered', reply: unservable }, info, startedAt);
      settlement.settle(ch, msg, cancelled ? 'ack' : 'dead-letter', deadReason('unservable', unservable, info.attempt));
      return;
    }
    const abort = new CallAbort();
    this.d.running.set(msg, abort);
    let timer: NodeJS.Timeout | undefined;
    const single = singleRequest(decoded);
    // Tracing off (no SDK registered): no span, and the delivery goes on as it was read.
    const tracer = activeTracer();
    const delivery: TracedDelivery = tracer ? tracedDelivery(tracer, info, { method: single?.method ?? 'batch', service: o.name, instanceId: o.instanceId, queue: this.d.n.serviceQueue(o.name) }, startedAt) : info;
    let outcome: TrackedOutcome | undefined;
    try {
      const run = this.run(single, decoded, delivery, abort, startedAt);
      // A synchronous handler's untracked call comes back as a value: no promise between it and its reply, and no
      // deadline timer either (none could fire before it returned). Armed in the same tick as the handler started
      // otherwise; clamped, as setTimeout fires at once for delays past 2^31-1 ms and the header is the caller's to set.
      if (run instanceof Promise) {
        timer = setTimeout(() => abort.abort(new DeadlineExceededError()), Math.min(info.deadline - Date.now(), 2 ** 31 - 1));
        outcome = await run;
        clearTimeout(timer);
      } else outcome = run;
      // The reply does not wait for the store; the settle does, so a redelivery finds the outcome (docs/reliability.md).
      if (outcome.reply !== undefined && info.replyTo) settlement.reply(info, outcome.reply);
      this.count(outcome);
      if (o.observer) observeSettled(o.observer, { method: this.methodLabel(single?.method), outcome }, info, startedAt);
      if (outcome.stored) await outcome.stored;
      settlement.settleAs(ch, msg, outcome.settle, single?.method ?? '', info.deadline, outcome.source === 'store' ? 'worker_lost' : 'retryable_error');
    } finally {
      clearTimeout(timer);
      this.d.running.delete(msg);
      if (delivery.span) endServerSpan(delivery.span, outcome, outcome?.source === 'store' ? 'worker_lost' : 'retryable_error');
    }
  }

  /**
   * Runs one request and says what came of it: through the tracker when it tracks it (a single
   * request), else here. A value, not a promise, only when no tracker is configured and the
   * handler answered synchronously: the hot path of an untracked service costs no promise.
   */
  run(single: RequestMessage | undefined, decoded: Decoded, info: TracedDelivery, abort: CallAbort, startedAt: number): TrackedOutcome | Promise<TrackedOutcome> {
    const tracker = this.d.o.tracker;
    if (tracker && single) return this.tracked(tracker, single, decoded, info, abort, startedAt);
    // Untracked work on a tracked instance (a batch) stays out of a suspect's way too.
    if (tracker) return this.laned(single, decoded, info, abort);
    const executed = this.execute(single, decoded, info, abort, { attempt: info.attempt });
    return executed instanceof Promise ? executed.then(outcomeOf) : outcomeOf(executed);
  }

  private tracked(tracker: CallTracker, single: RequestMessage, decoded: Decoded, info: TracedDelivery, abort: CallAbort, startedAt: number): Promise<TrackedOutcome> {
    const { o, retries } = this.d;
    const maxAttempts = retries.attemptsOf(single.method);
    const retryDelaysMs = retries.scheduleOf(single.method);
    const traceId = parseTraceparent(info.traceparent)?.traceId;
    const call: RunningCall = { callId: info.callId, id: single.id, method: single.method, service: o.name, worker: o.instanceId, attempt: info.attempt, firstDelivery: info.firstDelivery, deadline: info.deadline, startedAt, params: single.params, ...(traceId === undefined ? {} : { traceId }), ...(maxAttempts === undefined ? {} : { maxAttempts }), ...(retryDelaysMs === undefined ? {} : { retryDelaysMs }) };
    let executed = false;
    const execute = (run: RunInfo): Promise<Executed> => {
      executed = true;
      const result = this.execute(single, decoded, info, abort, run, call);
      return result instanceof Promise ? result : Promise.resolve(result);
    };
    return tracker.run(call, abort, execute).catch((err: unknown) => {
      if (executed) throw err;
      // Tracking is an aid, not a gate: a tracker that failed before running the call lets it run untracked.
      this.d.log.debug({ err }, 'tracker failed; running untracked');
      return this.laned(single, decoded, info, abort);
    });
  }

  /** An untracked run on a tracked instance: held back while a suspect runs alone (suspect-lane.ts). */
  private async laned(single: RequestMessage | undefined, decoded: Decoded, info: TracedDelivery, abort: CallAbort): Promise<TrackedOutcome> {
    // Awaited only when the lane made it wait: a healthy instance's synchronous `true` costs no microtask.
    const entry = this.d.lane.enter(abort);
    const laned = typeof entry === 'boolean' ? entry : await entry;
    try {
      const executed = this.execute(single, decoded, info, abort, { attempt: info.attempt });
      return outcomeOf(executed instanceof Promise ? await executed : executed);
    } finally {
      if (laned) this.d.lane.leave();
    }
  }

  /**
   * Runs the handler(s) of a delivered request and says what came of it; an abort that fired first answers
   * for it. A value, not a promise, when the handler answered synchronously.
   */
  private execute(single: RequestMessage | undefined, decoded: Decoded, info: TracedDelivery, abort: CallAbort, run: RunInfo, tracked?: RunningCall): Executed | Promise<Executed> {
    const owner = this.d.owner;
    const ctx = single ? callContext(owner, single, info, run.attempt, abort, tracked, run.effects) : undefined;
    // A tracked call RabbitMQ delivers again runs here because the tracker found its previous run lost (or given back).
    if (info.span && tracked && info.redelivered) markTakeover(info.span, run.attempt);
    // A call aborted before its handler started (cancelled or timed out while the tracker decided) never starts.
    // A batch's members get contexts of their own; each one's held-back progress is flushed with the single's.
    const members: CallContext[] = [];
    const member = (m: RequestMessage | NotificationMessage): CallContext => {
      const c = callContext(owner, m, info, run.attempt, abort);
      members.push(c);
      return c;
    };
    const work = abort.aborted ? aborted : info.span ? inSpan(info.span, () => this.dispatch(single, ctx, decoded, member)) : this.dispatch(single, ctx, decoded, member);
    if (work instanceof Promise) return abort.race(work, aborted).then((outcome) => this.conclude(outcome, single, ctx, members, info, run, abort));
    return this.conclude(work, single, ctx, members, info, run, abort);
  }

  /** Hands a request (its context made) or a batch (contexts made per member) to the handlers. */
  private dispatch(single: RequestMessage | undefined, ctx: CallContext | undefined, decoded: Decoded, member: (m: RequestMessage | NotificationMessage) => CallContext): ResponseMessage | Promise<ResponseMessage | ResponseMessage[] | null> {
    return single && ctx ? this.d.dispatcher.respond(single, ctx) : this.d.dispatcher.handle(decoded, member);
  }

  /** What a run came to, once its handler(s) answered (or its abort fired first). */
  private conclude(outcome: ResponseMessage | ResponseMessage[] | null | typeof aborted, single: RequestMessage | undefined, ctx: CallContext | undefined, members: readonly CallContext[], info: DeliveryInfo, run: RunInfo, abort: CallAbort): Executed {
    // Held-back progress goes out before the answer, on the same channel, so it arrives first.
    ctx?.endProgress();
    for (const c of members) c.endProgress();
    const response = outcome === aborted ? abortedResponse(abort.reason, single) : outcome;
    if (response === 'requeue') return requeued;
    if (!response) return nothing;
    if (Array.isArray(response)) return { kind: 'answer', text: encodeAnswer(response, members, this.d.log), response: undefined };
    const plan = ctx && single ? this.d.retries.plan(single.method, response, ctx, run.attempt, info.deadline) : undefined;
    if (plan?.action === 'retry') return { kind: 'retry', delayMs: plan.delayMs, nextAttempt: plan.nextAttempt, nextTryAt: plan.nextTryAt };
    if (isErrorResponse(response)) this.d.counters.failed++;
    // Serialized once: the tracker stores the very text the caller receives.
    const text = encodeAnswer(response, ctx ?? members, this.d.log);
    if (plan?.action === 'exhausted') return { kind: 'answer', text, response, deadLetter: deadReason('retries_exhausted', response, run.attempt) };
    return { kind: 'answer', text, response };
  }

  /** A method's metrics label: only methods this service serves, so a caller cannot grow the label set. */
  private methodLabel(method: string | undefined): string {
    return method !== undefined && Object.hasOwn(this.d.o.methods, method) ? method : 'other';
  }

  private count(outcome: TrackedOutcome): void {
    const { settle } = outcome;
    const counters = this.d.counters;
    if (outcome.source === 'store') counters.answeredFromStore++;
    else if (settle.action === 'ack' || settle.action === 'dead-letter') counters.answered++;
    if (settle.action === 'dead-letter') counters.deadLettered++;
  }
}

/** The context a handler gets for one message of a delivery. */
export function callContext(owner: ContextOwner, message: RequestMessage | NotificationMessage, info: TracedDelivery, attempt: number, abort: CallAbort, tracked?: RunningCall, effects?: EffectLedger): CallContext {
  const facts: CallFacts = { callId: info.callId, method: message.method, id: 'id' in message ? message.id : undefined, deadline: info.deadline, attempt, parentTrace: info.traceparent, tracestate: info.tracestate, span: info.span, replyTo: info.replyTo, wantsProgress: info.wantsProgress, tracked, effects };
  return new CallContext(facts, abort, owner);
}

/** The answer to a request cancelled before it arrived (the call's id when it has one). */
function cancelledResponse(decoded: Decoded): ResponseMessage {
  const id = decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message.id : null;
  return { jsonrpc: '2.0', error: new CancelledError(undefined, { reason: 'cancelled' }).toErrorObject(), id };
}

/** The single request in a decoded body, if that is what it is. */
function singleRequest(decoded: Decoded): RequestMessage | undefined {
  return decoded.kind === 'single' && decoded.item.kind === 'request' ? decoded.item.message : undefined;
}

/** The method of an expired request, read only for the metrics label (the body is not otherwise decoded). */
function methodOf(body: Buffer): string {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && 'method' in parsed && typeof parsed.method === 'string' ? parsed.method : '';
  } catch {
    return '';
  }
}

/** What to do when a call's signal fired before its handler finished. */
function abortedResponse(reason: unknown, single: RequestMessage | undefined): ResponseMessage | 'requeue' | null {
  if (reason instanceof ShuttingDownError) return 'requeue';
  const error = reason instanceof JsonRpcError ? reason : new CancelledError();
  return single ? { jsonrpc: '2.0', error: error.toErrorObject(), id: single.id } : null;
}
