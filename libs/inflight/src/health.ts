import type { TrackingReport } from '@warren/calls';
import type { Logger } from '@warren/logger';

/**
 * Whether calls are being tracked. `connecting` and `degraded` both mean
 * "Redis is not answering": calls run untracked (or fail, with
 * `requireTracking`). `closed` after `stop()`.
 */
export type TrackingState = TrackingReport['state'];

/** What a tracker reports for metrics and tests. */
export interface TrackerHealth {
  readonly state: TrackingState;
  /** When the current state began, ms since the epoch. */
  readonly since: number;
  /** Times tracking went from working to degraded. */
  readonly degradedTransitions: number;
  /** Calls claimed in Redis. */
  readonly tracked: number;
  /** Calls run (or, with requireTracking, failed) without tracking because Redis was unavailable. */
  readonly untracked: number;
  /** Calls answered from a stored outcome (redelivered after they finished, or cancelled before they started). */
  readonly answeredFromStore: number;
  /** Deliveries that waited for another live worker's result (each counted once, however long it waited). */
  readonly waited: number;
  /** Calls taken over from a worker whose lease ran out. */
  readonly takeovers: number;
  /** Of those, the ones taken over alone in this worker's suspect lane (a call's second takeover, or one at its last attempt: takeover.ts). */
  readonly isolated: number;
  /** Calls whose worker was lost sent to wait in a delay queue before their next attempt (their method's retry policy). */
  readonly delayedAfterLoss: number;
  /** Calls dead-lettered after their last allowed attempt. */
  readonly deadLettered: number;
  /** Handlers aborted by a cancel request. */
  readonly cancelled: number;
  /** Calls whose lease this worker lost while still running them (another worker took over). */
  readonly leasesLost: number;
}

type Counter = Exclude<keyof TrackerHealth, 'state' | 'since'>;

/**
 * The degraded-mode state machine: each transition is logged once (never once
 * per call), and counted.
 */
export class Health {
  private current: TrackingState = 'connecting';
  private changedAt = Date.now();
  private readonly counters: Record<Counter, number> = {
    degradedTransitions: 0, tracked: 0, untracked: 0, answeredFromStore: 0, waited: 0, takeovers: 0, isolated: 0, delayedAfterLoss: 0, deadLettered: 0, cancelled: 0, leasesLost: 0,
  };

  private readonly listeners: (() => void)[] = [];

  /** `requireTracking`: while Redis is away calls fail instead of running untracked (what the degraded line says). */
  constructor(private readonly log: Logger, private readonly requireTracking = false) {}

  /** Tells `listener` after every change of state. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  get state(): TrackingState {
    return this.current;
  }

  /** True while calls can be tracked. */
  get tracking(): boolean {
    return this.current === 'tracking';
  }

  count(counter: Counter): void {
    this.counters[counter]++;
  }

  /** Redis answered. */
  up(): void {
    if (this.current === 'tracking' || this.current === 'closed') return;
    const was = this.current;
    this.set('tracking');
    if (was === 'degraded') this.log.info('in-flight tracking resumed: Redis is back');
    else this.log.debug('in-flight tracking started');
  }

  /** Redis failed or went away; `err` is what showed it. */
  down(err: unknown): void {
    if (this.current === 'degraded' || this.current === 'closed') return;
    const atStart = this.current === 'connecting';
    if (this.current === 'tracking') this.counters.degradedTransitions++;
    this.set('degraded');
    // One line, and it says what degraded means: an operator who reads only this knows what the calls lose.
    this.log.warn({ err }, `in-flight tracking DEGRADED: Redis ${atStart ? 'cannot be reached at start' : 'stopped answering'}; until it answers, ${this.meaning()}`);
  }

  /** What calls get while Redis is away (docs/reliability.md, "Redis down"). */
  private meaning(): string {
    if (this.requireTracking) return 'every call fails with -32002 (data.reason tracking_unavailable), as requireTracking asks';
    return 'calls run untracked: at-least-once (a redelivered call runs again), no stored outcomes (status and inflight cannot see them, a redelivery is not answered from the store), no ctx.once dedup (effects may repeat)';
  }

  close(): void {
    this.set('closed');
  }

  snapshot(): TrackerHealth {
    return { state: this.current, since: this.changedAt, ...this.counters };
  }

  private set(state: TrackingState): void {
    if (state === this.current) return;
    this.current = state;
    this.changedAt = Date.now();
    for (const listener of this.listeners) listener();
  }
}
