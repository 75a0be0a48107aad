// The tracker as a service sees it (the CallTracker hook): its lifecycle and one timer, the run of a
// delivery, and the recording of what the run came to. The store is injected (redis-tracker.ts,
// memory.ts); the decisions are in claim-decisions.ts, leases and cancels in claim-leases.ts, the
// ctx.once ledger in once-ledger.ts.
import {
  outcomeOf, type Abortable, type CallTracker, type Executed, type Isolation, type Progress, type RunInfo, type RunningCall,
  type TrackedOutcome, type TrackingReport,
} from '@warren/calls';
import { ErrorCode, assertNever, encodeResponse, isErrorResponse, type ResponseMessage } from '@warren/jsonrpc';
import { attempt } from './attempt';
import { ClaimDecisions } from './claim-decisions';
import { maxEarlyCancels } from './claim-leases';
import { metaOf } from './claim-texts';
import type { TrackerHealth, TrackingState } from './health';
import { resultTtlMs, workerEntryTtlMs, workersTtlMs } from './keys';
import { terminalState, type ClaimReply } from './record-codec';
import { RunDecision, type Claim, type Decision } from './run-decision';

export type { Decision } from './run-decision';

const ack = { action: 'ack' } as const;

interface Instance {
  readonly service: string;
  readonly instanceId: string;
  readonly running: () => number;
  readonly startedAt: number;
}

const noop = (): void => undefined;

/**
 * Warren's {@link CallTracker} over an in-flight store (Redis, or the in-memory twin): claims each
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
 * const tracker = createRedisTracker({ redis: 'redis://127.0.0.1:6379', keyPrefix: 'warren' }); // a StoreCallTracker over RedisStore
 * const service = await startService({ urls, name: 'calculator', methods, tracker });
 * // service.close() stops the tracker too.
 */
export class StoreCallTracker extends ClaimDecisions implements CallTracker {
  private instance: Instance | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

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
    if (this.instance) throw new Error(`StoreCallTracker already started for ${this.instance.service}/${this.instance.instanceId}: use one tracker per service instance`);
    this.instance = { service: info.service, instanceId: info.instanceId, running: info.running, startedAt: Date.now() };
    if (info.isolation) this.lane = info.isolation;
    // One past the cap: a read-back that overflows it is noticed (marksOverflowUntil).
    this.store.subscribeCancels(info.instanceId, (callId, markTtlMs) => this.leases.onCancel(callId, markTtlMs), maxEarlyCancels + 1);
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
    if (call.firstDelivery === true && this.o.awaitClaim === 'redeliveries' && this.status.tracking && this.store.listening && this.leases.everyMarkKept() && !this.leases.cancelledEarly(call.callId)) {
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
    const claim = this.leases.register(call, token, controller, this.leaveLane);
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
        this.leases.abort(claim);
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
  /** @internal Stores a run's outcome (the recording half of {@link run}); never rejects. */
  finish(call: RunningCall, response: ResponseMessage, text: string = encodeResponse(response)): Promise<void> {
    if (this.observers.size > 0 && this.observers.delete(call)) return Promise.resolve();
    const found = this.leases.byCall.get(call.callId);
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

  /** The attempt failed retryably and waits in a delay queue: the record says `retrying` until the next delivery claims it. */
  /** @internal */
  retrying(call: RunningCall, nextTryAt: number): Promise<void> {
    const claim = this.leases.byCall.get(call.callId);
    if (!claim || claim.call !== call || !this.status.tracking) return Promise.resolve();
    // Not released back to queued: the record waits as `retrying`, and release needs no script.
    claim.finished = true;
    return attempt(() => this.store.retrying(call.callId, claim.token, nextTryAt))
      .then((marked) => (marked === 1 ? this.listRetrying(call) : undefined))
      .then(noop, (err: unknown) => this.failed(err, 'retrying'));
  }

  /** Stores a claimed call's progress; a no-op for calls not claimed here and while Redis is away. */
  progress(call: RunningCall, progress: Progress): Promise<void> {
    const claim = this.leases.byCall.get(call.callId);
    if (!claim || claim.call !== call || claim.finished || claim.lost || !this.status.tracking) return Promise.resolve();
    return attempt(() => this.store.progress(call.callId, claim.token, JSON.stringify(progress), resultTtlMs(call.deadline, Date.now(), this.o.resultTtlMs))).then(noop, (err: unknown) => this.failed(err, 'progress'));
  }

  /** @internal A run's release (RunDecision): not for callers. */
  release(claim: Claim): void {
    this.leases.unregister(claim);
    // First: a place in the lane not given back would hold every suspect (and what waits behind them) for good.
    claim.free();
    // Unfinished (requeued on shutdown, or failed): drop the lease so the next delivery need not wait it out.
    if (!claim.finished && this.status.tracking) attempt(() => this.store.release(claim.call.callId, claim.token)).catch((err: unknown) => this.failed(err, 'release'));
  }

  /** The one timer: heartbeat (which doubles as the probe while degraded), lease renewals, housekeeping. */
  private async tick(): Promise<void> {
    const instance = this.instance;
    if (this.ticking || this.closing || !instance) return;
    this.ticking = true;
    try {
      const calls = this.leases.listed();
      const entry = { service: instance.service, instanceId: instance.instanceId, inflight: instance.running(), calls, startedAt: instance.startedAt, heartbeatMs: this.o.heartbeatMs };
      try {
        await this.store.heartbeat(instance.service, instance.instanceId, entry, workerEntryTtlMs(this.o.heartbeatMs), workersTtlMs(this.o.heartbeatMs));
        if (!this.closing) this.status.up();
      } catch (err) {
        this.failed(err, 'heartbeat');
      }
      if (this.status.tracking) await this.leases.renewDue();
      this.leases.sweep(Date.now());
    } finally {
      this.ticking = false;
    }
  }

}
