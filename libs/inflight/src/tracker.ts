import type { Abortable, CallTracker, TrackDecision, TrackedCall, TrackingReport } from '@warren/amqp';
import {
  CancelledError, ErrorCode, ServiceUnavailableError, WorkerLostError, failureResponse, idText, isErrorResponse, type ResponseMessage,
} from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import { assertNever, encodeMeta, maxListedCalls, outcomeResponse, terminalState, type ClaimReply } from './decision';
import { isStoreBug } from './errors';
import { Health, type TrackerHealth, type TrackingState } from './health';
import { callTtlMs, keys, resultTtlMs, workerEntryTtlMs, workersTtlMs } from './keys';
import { resolveTrackerOptions, type ResolvedTrackerOptions, type TrackerOptions } from './options';
import { sleep } from './sleep';
import { RedisStore, type TrackerStore } from './store';

/** A call this instance claimed and runs. */
interface Claim {
  readonly call: TrackedCall;
  readonly token: string;
  readonly controller: Abortable;
  renewedAt: number;
  /** `finish` was called: release needs no script. */
  finished: boolean;
  /** Another worker took the call over while it still ran here. */
  lost: boolean;
}

/**
 * The decision to run a claimed call. A class, so that its `release` is one
 * method on the prototype rather than a closure made for every call.
 */
class RunDecision {
  readonly action = 'run';
  constructor(readonly attempt: number, private readonly claim: Claim, private readonly onRelease: (claim: Claim) => void) {}

  release(): void {
    this.onRelease(this.claim);
  }
}

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
 * request atomically before its handler runs, keeps the claim alive with a
 * lease while it runs, stores the outcome before the reply is sent, answers
 * redeliveries from the store, waits for a live owner instead of running a
 * call twice, takes over from a dead one, and aborts handlers on cancel.
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
export class RedisCallTracker implements CallTracker {
  private readonly o: ResolvedTrackerOptions;
  private readonly log: Logger;
  private readonly store: TrackerStore;
  private readonly status: Health;
  /**
   * Calls that waited for another live owner and were aborted meanwhile: they ran nowhere here, so
   * their finish writes nothing. A claimed call is found in `claims` instead (no WeakMap on the hot
   * path: its ephemerons cost every scavenge).
   */
  private readonly observers = new Set<TrackedCall>();
  private readonly claims = new Map<string, Claim>();
  /** Cancels that arrived before the claim they are for was registered here: callId → forget-after time. */
  private readonly earlyCancels = new Map<string, number>();
  private instance: Instance | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private seq = 0;
  private closing: Promise<void> | undefined;

  constructor(options: TrackerOptions = {}, store?: TrackerStore) {
    this.o = resolveTrackerOptions(options);
    this.log = this.o.logger.child({ component: 'inflight-tracker' });
    this.status = new Health(this.log);
    this.store = store ?? new RedisStore(this.o.redis, this.o.commandTimeoutMs, keys(this.o.keyPrefix), this.log, { autoPipelining: false });
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

  async start(info: { service: string; instanceId: string; running: () => number }): Promise<void> {
    if (this.instance) throw new Error(`RedisCallTracker already started for ${this.instance.service}/${this.instance.instanceId}: use one tracker per service instance`);
    this.instance = { ...info, startedAt: Date.now() };
    this.store.subscribeCancels(info.instanceId, (callId) => this.onCancel(callId));
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

  // begin, finish and claim chain promises instead of being async functions: the hot path then
  // makes one promise per step, not one per layer (npm run bench:tracker, four alternating runs
  // each: 19.4 against 21.0 µs of tracker CPU per call).
  begin(call: TrackedCall, controller: Abortable): Promise<TrackDecision> {
    if (!this.status.tracking) return Promise.resolve(this.untracked(call));
    const token = `${call.instanceId}.${(++this.seq).toString(36)}`;
    return this.claim(call, token).then((reply) => (reply?.kind === 'busy' ? this.waitForOwner(call, controller, token, reply) : this.afterClaim(call, controller, token, reply)));
  }

  finish(call: TrackedCall, response: ResponseMessage, text: string = JSON.stringify(response)): Promise<void> {
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
    return attempt(() => this.store.finish(call.callId, claim ? args : { ...args, unclaimed: { worker: call.instanceId, meta: metaOf(call) } })).then(noop, (err: unknown) => this.failed(err, 'finish'));
  }

  /** Another live worker runs this very call (a redelivery after a connection drop): wait for its outcome. */
  private async waitForOwner(call: TrackedCall, controller: Abortable, token: string, busy: Extract<ClaimReply, { kind: 'busy' }>): Promise<TrackDecision> {
    let reply: ClaimReply | undefined = busy;
    while (reply?.kind === 'busy') {
      this.status.count('waited');
      await sleep(Math.max(1, Math.min(this.o.waitPollMs, reply.leaseLeftMs + 1, call.deadline - Date.now())), controller.signal);
      if (controller.signal.aborted) {
        // Deadline, shutdown or cancel while waiting: the runtime sees the aborted signal and does not start the handler.
        this.observers.add(call);
        return { action: 'run', attempt: call.attempt, release: () => void this.observers.delete(call) };
      }
      reply = await this.claim(call, token);
    }
    return this.afterClaim(call, controller, token, reply);
  }

  private afterClaim(call: TrackedCall, controller: Abortable, token: string, reply: Exclude<ClaimReply, { kind: 'busy' }> | undefined): TrackDecision {
    return reply === undefined ? this.untracked(call) : this.decide(call, controller, token, reply);
  }

  private claim(call: TrackedCall, token: string): Promise<ClaimReply | undefined> {
    const now = Date.now();
    const args = {
      token,
      worker: call.instanceId,
      meta: metaOf(call),
      attempt: Math.max(1, call.attempt),
      leaseMs: this.o.leaseMs,
      runningTtlMs: callTtlMs(call.deadline, now, this.o.graceMs),
      maxAttempts: this.o.maxAttempts,
      finishedTtlMs: resultTtlMs(call.deadline, now, this.o.resultTtlMs),
      workerLostCode: ErrorCode.WorkerLost,
    };
    return attempt(() => this.store.claim(call.callId, args)).catch((err: unknown) => {
      this.failed(err, 'claim');
      return undefined;
    });
  }

  private decide(call: TrackedCall, controller: Abortable, token: string, reply: Exclude<ClaimReply, { kind: 'busy' }>): TrackDecision {
    switch (reply.kind) {
      case 'run':
        return this.run(call, controller, token, reply.attempt, reply.previousOwner);
      case 'stored': {
        // The stored response carries the id of the same request body; set it anyway, call ids are only as unique as their publisher makes them.
        const outcome = outcomeResponse(reply.state, reply.result, reply.code, call.id);
        if (!outcome) return this.untracked(call);
        const response = { ...outcome, id: call.id };
        this.status.count('answeredFromStore');
        return { action: 'answer', response };
      }
      case 'cancelled':
        this.status.count('answeredFromStore');
        return { action: 'answer', response: failureResponse(call.id, new CancelledError().toErrorObject()) };
      case 'dead':
        this.status.count('deadLettered');
        this.log.warn({ callId: call.callId, method: call.method, attempts: reply.attempts, lastOwner: reply.lastOwner }, 'call dead-lettered: every attempt lost its worker');
        return { action: 'dead-letter', response: failureResponse(call.id, new WorkerLostError(undefined, { attempts: reply.attempts }).toErrorObject()) };
      case 'invalid':
        this.log.error({ reply: String(reply.raw) }, 'unexpected claim reply; running untracked');
        return this.untracked(call);
      default:
        return assertNever(reply);
    }
  }

  private run(call: TrackedCall, controller: Abortable, token: string, attempt: number, previousOwner: string | undefined): TrackDecision {
    const claim: Claim = { call, token, controller, renewedAt: Date.now(), finished: false, lost: false };
    this.claims.set(call.callId, claim);
    this.status.count('tracked');
    if (previousOwner !== undefined) {
      this.status.count('takeovers');
      this.log.info({ callId: call.callId, method: call.method, attempt, previousOwner }, 'took over a call whose worker stopped renewing its lease');
    }
    if (this.earlyCancels.delete(call.callId)) this.abort(claim);
    return new RunDecision(attempt, claim, this.releaseClaim);
  }

  private readonly releaseClaim = (claim: Claim): void => this.release(claim);

  private release(claim: Claim): void {
    if (this.claims.get(claim.call.callId) === claim) this.claims.delete(claim.call.callId);
    // Unfinished (requeued on shutdown, or failed): drop the lease so the next delivery need not wait it out.
    if (!claim.finished && this.status.tracking) this.store.release(claim.call.callId, claim.token).catch((err: unknown) => this.failed(err, 'release'));
  }

  private untracked(call: TrackedCall): TrackDecision {
    this.status.count('untracked');
    if (this.o.requireTracking) {
      return { action: 'answer', response: failureResponse(call.id, new ServiceUnavailableError(undefined, { reason: 'tracking_unavailable' }).toErrorObject()) };
    }
    return { action: 'run', attempt: call.attempt, release: noop };
  }

  private onCancel(callId: string): void {
    const claim = this.claims.get(callId);
    if (claim) this.abort(claim);
    // The cancel can overtake the claim's own reply on the other connection: remember it briefly (bounded).
    else if (this.earlyCancels.size < maxEarlyCancels) this.earlyCancels.set(callId, Date.now() + this.o.leaseMs);
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

function metaOf(call: TrackedCall): string {
  return encodeMeta({ service: call.service, method: call.method, deadline: call.deadline, rid: idText(call.id) });
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
