// The decision half of the tracker: from a delivery to what to do with it (run, answer from the
// store, wait for a live owner, take over alone, send to a delay queue, dead-letter), through the
// claim script and the suspect lane. StoreCallTracker (call-tracker.ts) adds the lifecycle and the
// recording of what a run came to.
import type { Abortable, Isolation, RunningCall } from '@warren/calls';
import { CancelledError, ErrorCode, WorkerLostError, assertNever, encodeResponse, failureResponse } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { attempt } from './attempt';
import { ClaimLeases } from './claim-leases';
import { metaOf, storedText, unavailableText } from './claim-texts';
import { isStoreBug } from './errors';
import { Health } from './health';
import { callTtlMs, resultTtlMs } from './keys';
import { OnceLedger } from './once-ledger';
import { resolveTrackerOptions, type ResolvedTrackerOptions, type TrackerOptions } from './options';
import type { ClaimReply } from './record-codec';
import { RunDecision, type Claim, type Decision, type RunOwner } from './run-decision';
import { sleep } from './sleep';
import type { TrackerStore } from './store-port';
import { tooLateToTakeOver } from './takeover';

/** Isolation for a tracker no service gave a suspect lane (a bench, a test): no lane, takeovers at once. */
const noIsolation: Isolation = { enter: () => true, leave: () => undefined, alone: () => Promise.resolve(() => undefined) };

const noop = (): void => undefined;

/** The tracker's logger; redis-tracker.ts gives its store the same one. */
export function trackerLogger(o: Pick<ResolvedTrackerOptions, 'logger'>): Logger {
  return o.logger.child({ component: 'inflight-tracker' });
}

/** What the tracker decides for each delivery, over an injected store; see StoreCallTracker. */
export abstract class ClaimDecisions implements RunOwner {
  protected readonly o: ResolvedTrackerOptions;
  protected readonly log: Logger;
  protected readonly store: TrackerStore;
  protected readonly status: Health;
  /**
   * Calls that waited for another live owner and were aborted meanwhile: they ran nowhere here, so
   * their finish writes nothing. A claimed call is found in `leases.byCall` instead.
   */
  protected readonly observers = new Set<RunningCall>();
  protected readonly leases: ClaimLeases;
  /** @internal The runs' `ctx.once` ledger (RunDecision): not for callers. */
  readonly once: OnceLedger;
  /** The service's suspect lane: every claim goes through it, and a suspect past its crowd takeover (takeover.ts) is taken over only alone in it. */
  protected lane: Isolation = noIsolation;
  protected readonly leaveLane = (): void => this.lane.leave();
  private seq = 0;
  protected closing: Promise<void> | undefined;

  /** `store` is the in-flight store this tracker owns from now on (it closes it on stop). */
  constructor(options: TrackerOptions, store: TrackerStore) {
    this.o = resolveTrackerOptions(options);
    this.log = trackerLogger(this.o);
    this.status = new Health(this.log, this.o.requireTracking);
    this.store = store;
    const failed = (err: unknown, op: string): void => this.failed(err, op);
    this.leases = new ClaimLeases(store, this.o.leaseMs, this.status, this.log, failed);
    this.once = new OnceLedger(store, this.o, failed);
    this.store.onConnection((up) => {
      if (this.closing) return;
      if (up) this.status.up();
      else this.status.down(new Error('Redis connection closed'));
    });
  }

  /** @internal A run's release (RunDecision): not for callers. */
  abstract release(claim: Claim): void;


  // begin, finish and claim chain promises instead of being async functions: the hot path then
  // makes one promise per step, not one per layer (npm run bench:tracker, four alternating runs
  // each: 19.4 against 21.0 µs of tracker CPU per call).
  /** @internal The decision half of {@link run} (tests drive it directly). */
  begin(call: RunningCall, controller: Abortable): Promise<Decision> {
    if (!this.status.tracking) return this.untracked(call, controller);
    return this.claimOnceEntered(call, controller, this.lane.enter(controller));
  }

  /** The first claim, once the call has its place in the lane (at once on the hot path: no suspect here, the lane is a counter). */
  protected claimOnceEntered(call: RunningCall, controller: Abortable, entered: true | Promise<boolean>): Promise<Decision> {
    if (entered === true) return this.firstClaim(call, controller);
    return entered.then((ok) => (ok ? this.firstClaim(call, controller) : this.notStarted(call)));
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
  protected listRetrying(call: RunningCall): Promise<void> {
    return attempt(() => this.store.listWaiting('retrying', call.callId, call.deadline, callTtlMs(call.deadline, Date.now(), this.o.graceMs)));
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
  protected notStarted(call: RunningCall): Decision {
    this.observers.add(call);
    return { action: 'run', attempt: call.attempt, release: () => void this.observers.delete(call) };
  }

  protected nextToken(call: RunningCall): string {
    return `${call.worker}.${(++this.seq).toString(36)}`;
  }

  protected claim(call: RunningCall, token: string, takeover: boolean, running = false): Promise<ClaimReply | undefined> {
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
        this.leases.takeEarlyCancel(call.callId);
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
    const claim = this.leases.register(call, token, controller, free);
    this.status.count('tracked');
    if (previousOwner !== undefined) {
      this.status.count('takeovers');
      this.log.info({ callId: call.callId, method: call.method, attempt, previousOwner }, 'took over a call whose worker stopped renewing its lease');
    }
    if (this.leases.takeEarlyCancel(call.callId)) this.leases.abort(claim);
    return new RunDecision(attempt, claim, this);
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


  protected failed(err: unknown, op: string): void {
    if (isStoreBug(err)) this.log.error({ err, op }, 'in-flight store rejected a script; the call runs untracked');
    else if (!this.closing) this.status.down(err);
  }
}
