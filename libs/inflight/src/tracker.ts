import {
  outcomeOf, type Abortable, type CallTracker, type EffectStart, type Executed, type Isolation, type Progress, type RunInfo, type RunningCall,
  type TrackedOutcome, type TrackingReport,
} from '@warren/calls';
import {
  CancelledError, ErrorCode, ServiceUnavailableError, WorkerLostError, encodeResponse, failureResponse, idText, isErrorResponse, type Id, type ResponseMessage,
} from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { assertNever, encodeMeta, maxListedCalls, outcomeResponse, terminalState, type ClaimReply } from './decision';
import { isStoreBug } from './errors';
import { Health, type TrackerHealth, type TrackingState } from './health';
import { callTtlMs, keys, resultTtlMs, workerEntryTtlMs, workersTtlMs } from './keys';
import { resolveTrackerOptions, type ResolvedTrackerOptions, type TrackerOptions } from './options';
import { sleep } from './sleep';
import { encodeParams } from './call-params';
import { RedisStore, type TrackerStore } from './store';
import { effectMark, parseEffectStart } from './effects';
import { RunDecision, type Claim, type RunOwner } from './run-decision';
import { tooLateToTakeOver } from './takeover';

/** What to do with a delivered request, decided before its handler runs (the first half of {@link RedisCallTracker.run}). */
export type Decision =
  /** Run the handler (unless the call's signal has fired meanwhile); `release` is called once whatever happens. */
  | (RunInfo & { readonly action: 'run'; release(): void })
  /** Do not run: reply with this text (a stored answer as it was stored, or a cancelled call's answer). */
  | { readonly action: 'answer'; readonly text: string }
  /** Do not run; reply with this text and dead-letter the request (every allowed attempt lost its worker). */
  | { readonly action: 'dead-letter'; readonly text: string; readonly attempts: number }
  /** Do not run now: its worker was lost and its method has a retry policy; it waits `delayMs` in a delay queue as attempt `nextAttempt`. */
  | { readonly action: 'retry'; readonly nextAttempt: number; readonly delayMs: number; readonly nextTryAt: number };

const ack = { action: 'ack' } as const;

/** Isolation for a tracker no service gave a suspect lane (a bench, a test): no lane, takeovers at once. */
const noIsolation: Isolation = { enter: () => true, leave: () => undefined, alone: () => Promise.resolve(() => undefined) };

interface Instance {
  readonly service: string;
  readonly instanceId: string;
  readonly running: () => number;
  readonly startedAt: number;
}

const noop = (): void => undefined;

/** Most cancels kept for calls not (yet) claimed here; past it a cancel is still caught by the next lease renewal. */
const maxEarlyCancels = 10_000;

/**
 * The Redis implementation of Warren's {@link CallTracker} port: claims each
 * request atomically before its handler runs (a redelivery waits for the
 * claim's answer; a first delivery only for its write), keeps the claim alive
 * with a lease while it runs, stores the outcome while the reply goes out and
 * before the ack, answers redeliveries from the store, waits for a live owner
 * instead of running a call twice, takes over from a dead one, and aborts
 * handlers on cancel.
 *
 * One tracker per service instance (`start` binds it). When Redis fails,
 * calls keep running untracked (see `requireTracking`) and tracking resumes
 * when it answers again.
 *
 * @example
 * const tracker = createRedisTracker({ redis: 'redis://127.0.0.1:6379', keyPrefix: 'warren' });
 * const service = await startService({ urls, name: 'calculator', methods, tracker });
 * // service.close() stops the tracker too.
 */
export class RedisCallTracker implements CallTracker, RunOwner {
  private readonly o: ResolvedTrackerOptions;
  private readonly log: Logger;
  private readonly store: TrackerStore;
  private readonly status: Health;
  /**
   * Calls that waited for another live owner and were aborted meanwhile: they ran nowhere here, so
   * their finish writes nothing. A claimed call is found in `claims` instead (no WeakMap on the hot
   * path: its ephemerons cost every scavenge).
   */
  private readonly observers = new Set<RunningCall>();
  private readonly claims = new Map<string, Claim>();
  /** Cancels that arrived before the claim they are for was registered here: callId → forget-after time. */
  private readonly earlyCancels = new Map<string, number>();
  /**
   * Until when a cancel mark that did not fit in `earlyCancels` lives (0: none was dropped). Until then no
   * first delivery starts before its claim's reply, since it could be the one a dropped mark was for.
   */
  private marksOverflowUntil = 0;
  private instance: Instance | undefined;
  /** The service's suspect lane: every claim goes through it, and a suspect past its crowd takeover (takeover.ts) is taken over only alone in it. */
  private lane: Isolation = noIsolation;
  private readonly leaveLane = (): void => this.lane.leave();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private seq = 0;
  private closing: Promise<void> | undefined;

  constructor(options: TrackerOptions = {}, store?: TrackerStore) {
    this.o = resolveTrackerOptions(options);
    this.log = this.o.logger.child({ component: 'inflight-tracker' });
    this.status = new Health(this.log);
    this.store = store ?? new RedisStore(this.o.redis, this.o.commandTimeoutMs, keys(this.o.keyPrefix), this.log, { autoPipelining: false, history: this.o.history });
    this.store.onConnection((up) => {
      if (this.closing) return;
      if (up) this.status.up();
      else this.status.down(new Error('Redis connection closed'));
    });
  }

  /** Tracking state and counters, for metrics. */
  health(): TrackerHealth {
    return this.status.snapshot();
  }

  get state(): TrackingState {
    return this.status.state;
  }

  /** What the service announces of its tracking (state and the counters operators alert on). */
  report(): TrackingReport {
    const h = this.status.snapshot();
    return { state: h.state, since: h.since, degradedTransitions: h.degradedTransitions, untracked: h.untracked };
  }

  onReportChange(listener: () => void): void {
    this.status.onChange(listener);
  }

  async start(info: { service: string; instanceId: string; running: () => number; isolation?: Isolation }): Promise<void> {
    if (this.instance) throw new Error(`RedisCallTracker already started for ${this.instance.service}/${this.instance.instanceId}: use one tracker per service instance`);
    this.instance = { service: info.service, instanceId: info.instanceId, running: info.running, startedAt: Date.now() };
    if (info.isolation) this.lane = info.isolation;
    // One past the cap: a read-back that overflows it is noticed (marksOverflowUntil).
    this.store.subscribeCancels(info.instanceId, (callId, markTtlMs) => this.onCancel(callId, markTtlMs), maxEarlyCancels + 1);
    if (await this.store.ready(this.o.connectTimeoutMs)) this.status.up();
    else this.status.down(new Error(`Redis not ready within ${this.o.connectTimeoutMs} ms`));
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.o.heartbeatMs);
    this.timer.unref();
  }

  /** Stops heartbeats, removes this worker's entry, and closes the connections. Idempotent. */
  stop(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.timer);
      const instance = this.instance;
      if (instance && this.status.tracking) await this.store.goodbye(instance.service, instance.instanceId).catch(noop);
      this.status.close();
      await this.store.close();
    })();
    return this.closing;
  }

  /** Same as {@link stop}: for owners that are not a Warren service (the bench, tests). */
  close(): Promise<void> {
    return this.stop();
  }

  /**
   * The one hook (CallTracker.run): decide, run through `execute`, record. The reply goes out while the
   * outcome is stored; `stored` tells the runtime when it may settle the delivery.
   */
  run(call: RunningCall, controller: Abortable, execute: (run: RunInfo) => Promise<Executed>): Promise<TrackedOutcome> {
    if (call.firstDelivery === true && this.o.awaitClaim === 'redeliveries' && this.status.tracking && this.store.listening && this.everyMarkKept() && !this.earlyCancels.has(call.callId)) {
      const entered = this.lane.enter(controller);
      if (entered === true) return this.runWhileClaiming(call, controller, execute);
      return this.claimOnceEntered(call, controller, entered).then((d) => this.carryOut(call, d, execute));
    }
    return this.begin(call, controller).then((d) => this.carryOut(call, d, execute));
  }

  /**
   * A first delivery (no run of it can exist anywhere, and no cancel mark was heard for it): the claim is
   * written, and the handler starts without waiting for its reply. The claim goes out at the end of this
   * tick (the batch) and the handler right after it, so a handler that kills the worker leaves its claim in
   * Redis and its redelivery is a suspect like any other. The reply to the claim can only say `run`, or,
   * when a cancel mark was made that this worker has not heard of, `cancelled`: then the handler is
   * aborted, and its finish stores what the run came to.
   */
  private runWhileClaiming(call: RunningCall, controller: Abortable, execute: (run: RunInfo) => Promise<Executed>): Promise<TrackedOutcome> {
    const token = this.nextToken(call);
    const claim = this.register(call, token, controller, this.leaveLane);
    const d = new RunDecision(call.attempt, claim, this);
    void this.claim(call, token, false, true).then((reply) => this.confirmed(claim, reply));
    const written = this.store.claimsWritten();
    return (written ? written.then(() => execute(d)) : execute(d)).then((executed) => this.ended(call, d, executed), (err: unknown) => {
      d.release();
      throw err;
    });
  }

  /** What the reply to a running call's claim says (see {@link runWhileClaiming}). */
  private confirmed(claim: Claim, reply: ClaimReply | undefined): void {
    if (reply === undefined) {
      // Redis failed (the tracker is degraded now): the run goes on untracked, as one started while it was away.
      this.status.count('untracked');
      return;
    }
    switch (reply.kind) {
      case 'run':
        this.status.count('tracked');
        return;
      case 'cancelled':
        this.abort(claim);
        return;
      default:
        // Only a call id another publisher used already: the first outcome stored stays the record's.
        this.status.count('tracked');
        this.log.warn({ callId: claim.call.callId, method: claim.call.method, reply: JSON.stringify(reply) }, 'a first delivery found a record under its call id (reused by a publisher); it runs anyway');
    }
  }

  private carryOut(call: RunningCall, d: Decision, execute: (run: RunInfo) => Promise<Executed>): TrackedOutcome | Promise<TrackedOutcome> {
    switch (d.action) {
      case 'answer':
        return { reply: d.text, settle: ack, source: 'store' };
      case 'dead-letter':
        return { reply: d.text, settle: { action: 'dead-letter', reason: 'worker_lost', code: ErrorCode.WorkerLost, attempts: d.attempts }, source: 'store' };
      case 'retry':
        return { reply: undefined, settle: { action: 'retry', delayMs: d.delayMs, nextAttempt: d.nextAttempt }, source: 'store' };
      case 'run':
        // The decision is the run's info (attempt, effects): no object made for it.
        return execute(d).then((executed) => this.ended(call, d, executed), (err: unknown) => {
          d.release();
          throw err;
        });
      default:
        return assertNever(d);
    }
  }

  /** Records what a run came to; the claim is released once that is stored. */
  private ended(call: RunningCall, d: Extract<Decision, { action: 'run' }>, executed: Executed): TrackedOutcome {
    const outcome = outcomeOf(executed);
    const stored = executed.kind === 'answer' && executed.response && executed.text !== undefined
      ? this.finish(call, executed.response, executed.text)
      : executed.kind === 'retry' ? this.retrying(call, executed.nextTryAt) : undefined;
    if (!stored) {
      d.release();
      return outcome;
    }
    return { reply: outcome.reply, settle: outcome.settle, source: outcome.source, stored: stored.then(() => d.release()) };
  }

  // begin, finish and claim chain promises instead of being async functions: the hot path then
  // makes one promise per step, not one per layer (npm run bench:tracker, four alternating runs
  // each: 19.4 against 21.0 µs of tracker CPU per call).
  /** @internal The decision half of {@link run} (tests drive it directly). */
  begin(call: RunningCall, controller: Abortable): Promise<Decision> {
    if (!this.status.tracking) return this.untracked(call, controller);
    return this.claimOnceEntered(call, controller, this.lane.enter(controller));
  }

  /** The first claim, once the call has its place in the lane (at once on the hot path: no suspect here, the lane is a counter). */
  private claimOnceEntered(call: RunningCall, controller: Abortable, entered: true | Promise<boolean>): Promise<Decision> {
    if (entered === true) return this.firstClaim(call, controller);
    return entered.then((ok) => (ok ? this.firstClaim(call, controller) : this.notStarted(call)));
  }

  /** @internal Stores a run's outcome (the recording half of {@link run}); never rejects. */
  finish(call: RunningCall, response: ResponseMessage, text: string = encodeResponse(response)): Promise<void> {
    if (this.observers.size > 0 && this.observers.delete(call)) return Promise.resolve();
    const found = this.claims.get(call.callId);
    const claim = found?.call === call ? found : undefined;
    if (claim) claim.finished = true;
    if (!this.status.tracking) return Promise.resolve();
    const args = {
      state: terminalState(response),
      result: text,
      ttlMs: resultTtlMs(call.deadline, Date.now(), this.o.resultTtlMs),
      code: isErrorResponse(response) ? String(response.error.code) : '',
    };
    // A call that ran unclaimed (Redis was down when it started) still leaves its outcome, for a redelivery or a lost reply.
    return attempt(() => this.store.finish(call.callId, claim ? args : { ...args, unclaimed: { worker: call.worker, meta: metaOf(call) } })).then(noop, (err: unknown) => this.failed(err, 'finish'));
  }

  /** The first claim of a delivery, made with its place in the lane taken. */
  private firstClaim(call: RunningCall, controller: Abortable): Promise<Decision> {
    const token = this.nextToken(call);
    return this.claim(call, token, false).then((reply) => this.afterClaim(call, controller, token, reply, this.leaveLane, false));
  }

  /**
   * What a claim made with a place in the lane (`free` gives it back) leads to: a run keeps the place
   * until release; anything else gives it back at once, then waits for a live owner, or for this
   * suspect's turn to run alone.
   */
  private afterClaim(call: RunningCall, controller: Abortable, token: string, reply: ClaimReply | undefined, free: () => void, waited: boolean): Decision | Promise<Decision> {
    if (reply === undefined) return this.untrackedRun(call, free);
    if (reply.kind === 'run' || reply.kind === 'invalid') return this.decide(call, controller, token, reply, free);
    free();
    if (reply.kind === 'busy') return this.waitForOwner(call, controller, token, reply, waited);
    if (reply.kind === 'expired') return this.isolate(call, controller, token, waited);
    if (reply.kind === 'retry') return this.delayed(call, reply);
    return this.decide(call, controller, token, reply, noop);
  }

  /** The attempt failed retryably and waits in a delay queue: the record says `retrying` until the next delivery claims it. */
  /** @internal */
  retrying(call: RunningCall, nextTryAt: number): Promise<void> {
    const claim = this.claims.get(call.callId);
    if (!claim || claim.call !== call || !this.status.tracking) return Promise.resolve();
    // Not released back to queued: the record waits as `retrying`, and release needs no script.
    claim.finished = true;
    return attempt(() => this.store.retrying(call.callId, claim.token, nextTryAt))
      .then((marked) => (marked === 1 ? this.listRetrying(call) : undefined))
      .then(noop, (err: unknown) => this.failed(err, 'retrying'));
  }

  /**
   * Its worker was lost and its method has a retry policy: the claim script marked it retrying (still
   * a suspect) rather than taking it over; the runtime sends it to the delay queue, and when it comes
   * back it is taken over like any suspect (in the crowd or alone, takeover.ts).
   */
  private delayed(call: RunningCall, reply: Extract<ClaimReply, { kind: 'retry' }>): Promise<Decision> {
    this.status.count('delayedAfterLoss');
    this.log.info({ callId: call.callId, method: call.method, attempt: reply.attempt, delayMs: reply.delayMs, lastOwner: reply.lastOwner }, 'call whose worker stopped renewing its lease waits in a delay queue before its next attempt');
    const decision: Decision = { action: 'retry', nextAttempt: reply.attempt, delayMs: reply.delayMs, nextTryAt: reply.nextTryAt };
    return this.listRetrying(call).then(() => decision, (err: unknown) => {
      this.failed(err, 'retrying list');
      return decision;
    });
  }

  /** Lists a call that waits in a delay queue, so the view shows it though no worker runs it. */
  private listRetrying(call: RunningCall): Promise<void> {
    return attempt(() => this.store.listWaiting('retrying', call.callId, call.deadline, callTtlMs(call.deadline, Date.now(), this.o.graceMs)));
  }

  /** Stores a claimed call's progress; a no-op for calls not claimed here and while Redis is away. */
  progress(call: RunningCall, progress: Progress): Promise<void> {
    const claim = this.claims.get(call.callId);
    if (!claim || claim.call !== call || claim.finished || claim.lost || !this.status.tracking) return Promise.resolve();
    return attempt(() => this.store.progress(call.callId, claim.token, JSON.stringify(progress), resultTtlMs(call.deadline, Date.now(), this.o.resultTtlMs))).then(noop, (err: unknown) => this.failed(err, 'progress'));
  }

  /** Another live worker runs this very call (a redelivery after a connection drop): wait for its outcome. */
  private async waitForOwner(call: RunningCall, controller: Abortable, token: string, busy: Extract<ClaimReply, { kind: 'busy' }>, waited: boolean): Promise<Decision> {
    // Counted per delivery that waits, however many times it looks.
    if (!waited) this.status.count('waited');
    let reply: ClaimReply | undefined = busy;
    while (reply?.kind === 'busy') {
      await sleep(Math.max(1, Math.min(this.o.waitPollMs, reply.leaseLeftMs + 1, call.deadline - Date.now())), controller.signal);
      // Deadline, shutdown or cancel while waiting: the runtime sees the aborted signal and does not start the handler.
      if (controller.signal.aborted) return this.notStarted(call);
      const entered = this.lane.enter(controller);
      if (entered !== true && !(await entered)) return this.notStarted(call);
      reply = await this.claim(call, token, false);
      if (reply?.kind === 'busy') this.lane.leave();
    }
    return this.afterClaim(call, controller, token, reply, this.leaveLane, true);
  }

  /**
   * A suspect past its crowd takeover (its owner's lease ran out again, or this is its last attempt,
   * takeover.ts): take it over only alone in the lane, so that if it kills this worker too, no other
   * call here is charged for it.
   */
  private async isolate(call: RunningCall, controller: Abortable, token: string, waited: boolean): Promise<Decision> {
    const end = await this.lane.alone(controller);
    if (!end) return this.notStarted(call);
    const reply = await this.claim(call, token, true);
    if (reply?.kind === 'run' && reply.previousOwner !== undefined) this.status.count('isolated');
    return this.afterClaim(call, controller, token, reply, end, waited);
  }

  /** Aborted before it was claimed: it runs nowhere here, so its finish writes nothing. */
  private notStarted(call: RunningCall): Decision {
    this.observers.add(call);
    return { action: 'run', attempt: call.attempt, release: () => void this.observers.delete(call) };
  }

  private nextToken(call: RunningCall): string {
    return `${call.worker}.${(++this.seq).toString(36)}`;
  }

  private claim(call: RunningCall, token: string, takeover: boolean, running = false): Promise<ClaimReply | undefined> {
    const now = Date.now();
    const args = {
      token,
      worker: call.worker,
      meta: metaOf(call),
      // A call with no record was never started by a tracked worker: its first run is attempt 1, whatever
      // RabbitMQ says (a redelivery from a dead worker's prefetch window is not charged for that crash).
      attempt: 1,
      leaseMs: this.o.leaseMs,
      runningTtlMs: callTtlMs(call.deadline, now, this.o.graceMs),
      maxAttempts: call.maxAttempts ?? this.o.maxAttempts,
      finishedTtlMs: resultTtlMs(call.deadline, now, this.o.resultTtlMs),
      workerLostCode: ErrorCode.WorkerLost,
      takeover,
      running,
      late: !running && tooLateToTakeOver(call.deadline, now, this.o.takeoverMinMs),
      ...(call.retryDelaysMs === undefined ? {} : { retry: { deadline: call.deadline, delaysMs: call.retryDelaysMs } }),
    };
    return attempt(() => this.store.claim(call.callId, args)).catch((err: unknown) => {
      this.failed(err, 'claim');
      return undefined;
    });
  }

  private decide(call: RunningCall, controller: Abortable, token: string, reply: ClaimReply, free: () => void): Decision {
    switch (reply.kind) {
      case 'run':
        return this.claimed(call, controller, token, reply.attempt, reply.previousOwner, free);
      case 'stored': {
        const text = storedText(reply, call.id);
        if (text === undefined) return this.untrackedRun(call, free);
        this.status.count('answeredFromStore');
        return { action: 'answer', text };
      }
      case 'cancelled':
        this.status.count('answeredFromStore');
        // Answered here: a cancel mark remembered for it has served.
        this.earlyCancels.delete(call.callId);
        return { action: 'answer', text: encodeResponse(failureResponse(call.id, new CancelledError().toErrorObject())) };
      case 'dead':
        this.status.count('deadLettered');
        this.log.warn({ callId: call.callId, method: call.method, attempts: reply.attempts, lastOwner: reply.lastOwner }, 'call dead-lettered: every attempt lost its worker');
        return { action: 'dead-letter', attempts: reply.attempts, text: encodeResponse(failureResponse(call.id, new WorkerLostError(undefined, { attempts: reply.attempts }).toErrorObject())) };
      case 'busy':
      case 'expired':
      case 'retry':
      case 'invalid':
        this.log.error({ reply: JSON.stringify(reply) }, 'unexpected claim reply; running untracked');
        return this.untrackedRun(call, free);
      default:
        return assertNever(reply);
    }
  }

  private claimed(call: RunningCall, controller: Abortable, token: string, attempt: number, previousOwner: string | undefined, free: () => void): Decision {
    const claim = this.register(call, token, controller, free);
    this.status.count('tracked');
    if (previousOwner !== undefined) {
      this.status.count('takeovers');
      this.log.info({ callId: call.callId, method: call.method, attempt, previousOwner }, 'took over a call whose worker stopped renewing its lease');
    }
    if (this.earlyCancels.delete(call.callId)) this.abort(claim);
    return new RunDecision(attempt, claim, this);
  }

  /** A claim this instance runs from now on, found by its call id (cancels, renewals, finish). */
  private register(call: RunningCall, token: string, controller: Abortable, free: () => void): Claim {
    const claim: Claim = { call, token, controller, renewedAt: Date.now(), finished: false, lost: false, free };
    this.claims.set(call.callId, claim);
    return claim;
  }

  /** @internal A run's release (RunDecision): not for callers. */
  release(claim: Claim): void {
    if (this.claims.get(claim.call.callId) === claim) this.claims.delete(claim.call.callId);
    // First: a place in the lane not given back would hold every suspect (and what waits behind them) for good.
    claim.free();
    // Unfinished (requeued on shutdown, or failed): drop the lease so the next delivery need not wait it out.
    if (!claim.finished && this.status.tracking) attempt(() => this.store.release(claim.call.callId, claim.token)).catch((err: unknown) => this.failed(err, 'release'));
  }

  /** @internal The run's `ctx.once` ledger (RunDecision): not for callers. */
  effectStart(claim: Claim, name: string): Promise<EffectStart> {
    const ttlMs = resultTtlMs(claim.call.deadline, Date.now(), this.o.resultTtlMs);
    return attempt(() => this.store.effectStart(claim.call.callId, name, effectMark(claim.token), ttlMs)).then(parseEffectStart, (err: unknown) => {
      this.failed(err, 'effect start');
      // Like a call while Redis is away: unprotected, unless tracking is required.
      if (this.o.requireTracking) throw new ServiceUnavailableError(undefined, { reason: 'tracking_unavailable' });
      return { kind: 'run' } as const;
    });
  }

  effectComplete(claim: Claim, name: string, json: string): Promise<void> {
    const ttlMs = resultTtlMs(claim.call.deadline, Date.now(), this.o.resultTtlMs);
    // Not stored: a later run finds the start mark and reports the effect interrupted, rather than running it again.
    return attempt(() => this.store.effectComplete(claim.call.callId, name, json, ttlMs)).then(noop, (err: unknown) => this.failed(err, 'effect complete'));
  }

  effectForget(claim: Claim, name: string): Promise<void> {
    return attempt(() => this.store.effectForget(claim.call.callId, name, effectMark(claim.token))).then(noop, (err: unknown) => this.failed(err, 'effect forget'));
  }

  /** Redis is away (or the store answered nonsense): run without a claim, after taking a place in the lane. */
  private untracked(call: RunningCall, controller: Abortable): Promise<Decision> {
    if (this.o.requireTracking) {
      this.status.count('untracked');
      return Promise.resolve({ action: 'answer', text: unavailableText(call) });
    }
    const entered = this.lane.enter(controller);
    if (entered === true) return Promise.resolve(this.untrackedRun(call, this.leaveLane));
    return entered.then((ok) => (ok ? this.untrackedRun(call, this.leaveLane) : this.notStarted(call)));
  }

  private untrackedRun(call: RunningCall, free: () => void): Decision {
    this.status.count('untracked');
    if (this.o.requireTracking) {
      free();
      return { action: 'answer', text: unavailableText(call) };
    }
    return { action: 'run', attempt: call.attempt, release: free };
  }

  private onCancel(callId: string, markTtlMs?: number): void {
    const claim = this.claims.get(callId);
    if (claim) {
      this.abort(claim);
      return;
    }
    // The cancel can overtake the claim's own reply on the other connection: remember it briefly (bounded). A
    // mark is remembered as long as it lives, so a first delivery of its call waits for the claim (run).
    const until = Date.now() + (markTtlMs ?? this.o.leaseMs);
    if (this.earlyCancels.size < maxEarlyCancels || this.earlyCancels.has(callId)) this.earlyCancels.set(callId, Math.max(until, this.earlyCancels.get(callId) ?? 0));
    else if (markTtlMs !== undefined) this.marksOverflowUntil = Math.max(this.marksOverflowUntil, until);
  }

  /** No cancel mark was dropped for want of room, or every dropped one has expired. */
  private everyMarkKept(): boolean {
    if (this.marksOverflowUntil === 0) return true;
    if (Date.now() < this.marksOverflowUntil) return false;
    this.marksOverflowUntil = 0;
    return true;
  }

  private abort(claim: Claim): void {
    if (claim.controller.signal.aborted) return;
    this.status.count('cancelled');
    claim.controller.abort(new CancelledError());
  }

  /** The one timer: heartbeat (which doubles as the probe while degraded), lease renewals, housekeeping. */
  private async tick(): Promise<void> {
    const instance = this.instance;
    if (this.ticking || this.closing || !instance) return;
    this.ticking = true;
    try {
      const calls = [...this.claims.keys()].slice(0, maxListedCalls);
      const entry = { service: instance.service, instanceId: instance.instanceId, inflight: instance.running(), calls, startedAt: instance.startedAt, heartbeatMs: this.o.heartbeatMs };
      try {
        await this.store.heartbeat(instance.service, instance.instanceId, entry, workerEntryTtlMs(this.o.heartbeatMs), workersTtlMs(this.o.heartbeatMs));
        if (!this.closing) this.status.up();
      } catch (err) {
        this.failed(err, 'heartbeat');
      }
      if (this.status.tracking) await this.renewDue();
      const now = Date.now();
      for (const [callId, until] of this.earlyCancels) if (until < now) this.earlyCancels.delete(callId);
    } finally {
      this.ticking = false;
    }
  }

  /** Renews, in one batch (pipelined), the leases of calls that have run for a third of a lease since the last renewal. */
  private async renewDue(): Promise<void> {
    const now = Date.now();
    const due = [...this.claims.values()].filter((c) => !c.finished && !c.lost && now - c.renewedAt >= this.o.leaseMs / 3);
    await Promise.all(due.map(async (claim) => {
      claim.renewedAt = now;
      try {
        const outcome = await this.store.renew(claim.call.callId, claim.token, this.o.leaseMs);
        if (outcome === 1) this.abort(claim);
        else if (outcome === -1 && !claim.finished) {
          claim.lost = true;
          this.status.count('leasesLost');
          this.log.warn({ callId: claim.call.callId }, 'lease lost while the handler still runs: another worker took the call over');
        }
      } catch (err) {
        this.failed(err, 'renew');
      }
    }));
  }

  private failed(err: unknown, op: string): void {
    if (isStoreBug(err)) this.log.error({ err, op }, 'in-flight store rejected a script; the call runs untracked');
    else if (!this.closing) this.status.down(err);
  }
}

/** Runs `work`, turning a synchronous throw into a rejection, as an async function would. */
function attempt<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * A stored outcome as the reply text. The stored answer is replied as stored, unparsed: it carries the id of
 * the same request body, as the record's meta says. A call id reused by another publisher (ids are only as
 * unique as it makes them), or an outcome decided without a handler, gets an answer under the request's id.
 */
function storedText(reply: Extract<ClaimReply, { kind: 'stored' }>, id: Id): string | undefined {
  if (reply.result !== undefined && reply.rid === idText(id)) return reply.result;
  const outcome = outcomeResponse(reply.state, reply.result, reply.code, id);
  return outcome && encodeResponse({ ...outcome, id });
}

function unavailableText(call: RunningCall): string {
  return encodeResponse(failureResponse(call.id, new ServiceUnavailableError(undefined, { reason: 'tracking_unavailable' }).toErrorObject()));
}

function metaOf(call: RunningCall): string {
  const params = encodeParams(call.params);
  return encodeMeta({ service: call.service, method: call.method, deadline: call.deadline, rid: idText(call.id), ...(call.traceId === undefined ? {} : { traceId: call.traceId }), ...(params === undefined ? {} : { params }) });
}

/**
 * A tracker for one service instance, on a Redis connection of its own.
 * Pass it as `tracker` to `startService`; the service starts and stops it.
 *
 * @example
 * const tracker = createRedisTracker({ redis: process.env.REDIS_URL, keyPrefix: 'warren' });
 */
export function createRedisTracker(options: TrackerOptions = {}): RedisCallTracker {
  return new RedisCallTracker(options);
}
