import type { Schedule } from './spec';

/** The newest firing of a schedule, as the console and `schedule.list` show it. */
export interface LastRun {
  /** The occurrence it fired (epoch ms); absent for a run-now. */
  readonly occurrence?: number;
  readonly callId: string;
  /** When it was published. */
  readonly at: number;
  readonly outcome: 'running' | 'ok' | 'error';
  /** The JSON-RPC error code it failed with (`outcome: 'error'`). */
  readonly errorCode?: number;
  /** Run by `schedule.runNow` rather than by an occurrence. */
  readonly manual?: boolean;
  readonly finishedAt?: number;
}

/** What the scheduler remembers of one schedule between ticks and across holders. */
export interface ScheduleState {
  /** The newest occurrence handled (fired, skipped, missed or queued): the next holder goes on after it. */
  readonly lastOccurrence?: number;
  readonly lastRun?: LastRun;
  /** A fired call still running, until its deadline at the latest (the overlap policies read it). */
  readonly running?: { readonly callId: string; readonly until: number };
  /** Occurrences waiting for the running call to end (overlap `queue`), oldest first. */
  readonly queued?: readonly number[];
}

/** What claiming an occurrence gave: ours to fire, already handled by someone, or the lease is not ours. */
export type ClaimResult = 'claimed' | 'handled' | 'not_holder';

/** How an occurrence ended, as recorded under its key. */
export type OccurrenceEnd = 'fired' | 'skipped' | 'missed' | 'queued';

/**
 * Where schedules, their state, the scheduler lease and the per-occurrence records live: Redis
 * (redis-store.ts, durable, shared by every scheduler) or memory (memory-store.ts, embedded mode,
 * not durable). Writes of state come from the lease holder, and from whoever ran a run-now.
 */
export interface ScheduleStore {
  /** Whether schedules survive a restart (false: memory, embedded mode). */
  readonly durable: boolean;
  list(): Promise<Schedule[]>;
  get(name: string): Promise<Schedule | undefined>;
  /** Stores it; `replace: false` leaves an existing one and answers false. */
  put(schedule: Schedule, replace: boolean): Promise<boolean>;
  /** Removes it and its state; false when there was none. */
  remove(name: string): Promise<boolean>;
  states(names: readonly string[]): Promise<Map<string, ScheduleState>>;
  setState(name: string, state: ScheduleState): Promise<void>;
  /** Takes the scheduler lease for `token`, or extends it if `token` holds it. False: someone else holds it. */
  lease(token: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `token` holds it. */
  release(token: string): Promise<void>;
  /**
   * Claims one occurrence for `token`, atomically with checking that `token` holds the lease. An
   * occurrence claimed by another token (a holder that died before it fired) is taken over; one
   * already ended (fired, skipped, missed) answers `handled`; a `queued` one may be claimed to fire it.
   */
  claim(name: string, occurrence: number, token: string): Promise<ClaimResult>;
  /** Records how a claimed occurrence ended (once: its key expires after the store's occurrence TTL). */
  end(name: string, occurrence: number, how: OccurrenceEnd): Promise<void>;
  close(): Promise<void>;
}
