// The store port: what a worker's tracker (TrackerStore) and the view (ViewStore) need of the in-flight
// store, with the arguments of its two hot scripts. RedisStore (redis-store.ts) and MemoryInflightStore's
// handles (memory-store.ts) implement it; the tracker's unit tests fake it.
import type { ClaimReply, HeartbeatEntry, WorkerInfo } from './record-codec';
import type { HistoryKind } from './keys';

/** One history stream entry: its id (`<ms>-<seq>`, Redis time), the call id, the finished record (record-codec.ts format). */
/**
 * The lists of calls no worker runs now, which the view's `list` reads beside the workers' own lists:
 * `retrying` (waiting in a delay queue for the next attempt) and `queued` (sent by a caller that marks
 * its calls, `trackQueued`, and not taken by any worker yet). Both scored by deadline (keys.ts).
 */
export type WaitingList = 'retrying' | 'queued';

export type HistoryEntry = readonly [id: string, callId: string, record: string];

/** What the claim script needs besides the call id. */
export interface ClaimArgs {
  readonly token: string;
  readonly worker: string;
  /** See `encodeMeta` (record-codec.ts). */
  readonly meta: string;
  readonly attempt: number;
  readonly leaseMs: number;
  readonly runningTtlMs: number;
  readonly maxAttempts: number;
  readonly finishedTtlMs: number;
  readonly workerLostCode: number;
  /**
   * This claim runs alone (the worker's suspect lane), so it may take over any call whose owner's lease ran
   * out; without it, only one in its first crash (takeover.ts).
   */
  readonly takeover: boolean;
  /** Too little time is left before the deadline for a takeover: a suspect is recorded expired (-32001) instead. */
  readonly late?: boolean;
  /**
   * The handler runs already (a first delivery, started once this claim was written): a cancel mark found
   * is kept on the call's running record, and the claim answers `cancelled` so the tracker aborts it.
   */
  readonly running?: boolean;
  /**
   * The call's retry policy, as waits: with it, a call whose owner's lease ran out is sent to wait
   * `delaysMs[n - 1]` after its attempt n was lost (unless that passes `deadline`), not taken over at once.
   */
  readonly retry?: { readonly deadline: number; readonly delaysMs: readonly number[] };
}

export interface FinishArgs {
  readonly state: 'done' | 'failed' | 'cancelled' | 'expired';
  readonly result: string;
  readonly ttlMs: number;
  readonly code: string;
  /** For a call that ran unclaimed (Redis was down when it started): who ran it and what it was, written when the record lacks them. */
  readonly unclaimed?: { readonly worker: string; readonly meta: string };
}

/** The cancel script's answer. */
export type CancelReply =
  | { readonly outcome: 'marked'; readonly worker: string | undefined }
  | { readonly outcome: 'signalled'; readonly worker: string; readonly receivers: number }
  | { readonly outcome: 'cancelled'; readonly worker: string | undefined }
  | { readonly outcome: 'finished'; readonly state: string };

/** The operations a worker's tracker needs; `RedisStore` (redis-store.ts) implements them, tests fake them. */
export interface TrackerStore {
  claim(callId: string, args: ClaimArgs): Promise<ClaimReply>;
  /**
   * Resolves once the claims asked for so far are written to Redis' connection (a batch goes out at the
   * end of the tick); undefined when they are already (or the store applies them at once).
   */
  claimsWritten(): Promise<void> | undefined;
  finish(callId: string, args: FinishArgs): Promise<number>;
  release(callId: string, token: string): Promise<number>;
  renew(callId: string, token: string, leaseMs: number): Promise<number>;
  /** Marks a claimed call as waiting for its retry until `nextTryAt`; 1 marked, 0 no longer ours. */
  retrying(callId: string, token: string, nextTryAt: number): Promise<number>;
  /**
   * Lists a call no worker runs now (the view's `list` shows it) until its deadline, `ttlMs` from now at
   * least: `retrying`, waiting in a delay queue; `queued`, marked queued by its caller.
   */
  listWaiting(list: WaitingList, callId: string, deadline: number, ttlMs: number): Promise<void>;
  /**
   * Writes a running call's progress (JSON) if `token` still holds its claim, and appends it to the call's
   * progress log, which then lives `logTtlMs`; 1 written, 0 not.
   */
  progress(callId: string, token: string, json: string, logTtlMs: number): Promise<number>;
  heartbeat(service: string, instanceId: string, entry: HeartbeatEntry, entryTtlMs: number, keyTtlMs: number): Promise<void>;
  goodbye(service: string, instanceId: string): Promise<void>;
  /** `ctx.once`: marks effect `name` of a call started under `mark`, unless a run left something of it (once-marks.ts). */
  effectStart(callId: string, name: string, mark: string, ttlMs: number): Promise<unknown>;
  /** Stores an effect's result (JSON); the first stored wins. 1 when stored. */
  effectComplete(callId: string, name: string, json: string, ttlMs: number): Promise<number>;
  /** Drops the start mark `mark` of an effect whose `fn` threw. */
  effectForget(callId: string, name: string, mark: string): Promise<number>;
  /**
   * Calls `onCancel(callId)` for each cancel published for this instance, and `onCancel(callId, ttlMs)`
   * for each cancel mark (a call cancelled before any worker claimed it, kept `ttlMs`); survives reconnects.
   * Each time the subscription is (re)made, the marks still alive are read back (at most `maxMarks`,
   * longest-lived first), so a mark made before it or while it was away is told too.
   */
  subscribeCancels(instanceId: string, onCancel: (callId: string, markTtlMs?: number) => void, maxMarks: number): void;
  /** The cancel subscription is live and the live marks were read back: every live cancel mark has been told. */
  readonly listening: boolean;
  /** Told when the connection becomes usable (true) or is lost (false). */
  onConnection(listener: (up: boolean) => void): void;
  /** Resolves true once Redis is usable, false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The operations `InflightView` (view.ts) needs (operators and callers); `RedisStore` (redis-store.ts) and
 * `MemoryInflightStore`'s handles (memory-store.ts) implement them.
 */
/** The list of delayed calls (delayed.ts): entries are JSON, scored by due time. */
export interface DelayedStore {
  /** Lists a call until it is due; drops the entries due already, and past `max` those due last. Keys live `ttlMs` at least. */
  listDelayed(callId: string, dueAt: number, entry: string, ttlMs: number, max: number): Promise<void>;
  /** The entries not yet due, soonest first, at most `max`. */
  delayedEntries(max: number): Promise<string[]>;
  /** One call's entry, if listed. */
  delayedEntry(callId: string): Promise<string | undefined>;
  unlistDelayed(callIds: readonly string[]): Promise<void>;
}

export interface ViewStore extends DelayedStore {
  /** Live workers' heartbeat entries, and the store's clock. */
  workers(): Promise<{ now: number; workers: WorkerInfo[] }>;
  /** One call's record as named fields (`parseRecord`), its latest progress as `progress`; `{}` when there is none. */
  record(callId: string): Promise<Record<string, string>>;
  /** A call's earlier attempts (keys.ts `attempts`), JSON entries, oldest first; `[]` when none. */
  attempts(callId: string): Promise<string[]>;
  /** A call's progress log (keys.ts `progressLog`), JSON entries, oldest first; `[]` when none. */
  progressLog(callId: string): Promise<string[]>;
  /** Records a call as queued unless it has a record already; true when recorded. */
  markQueued(callId: string, meta: string, ttlMs: number): Promise<boolean>;
  /** Drops a call's queued mark if it is still only that (no worker claimed it, nobody cancelled it); true when dropped. */
  unmarkQueued(callId: string): Promise<boolean>;
  cancel(callId: string, markTtlMs: number): Promise<CancelReply>;
  /** As {@link TrackerStore.listWaiting}: the view lists the calls its caller marks queued. */
  listWaiting(list: WaitingList, callId: string, deadline: number, ttlMs: number): Promise<void>;
  /** The calls of one waiting list whose deadline has not passed, at most `max`. */
  waitingCalls(list: WaitingList, max: number): Promise<string[]>;
  /** Drops calls from a waiting list (a worker took them, or the view found them finished or forgotten). */
  unlistWaiting(list: WaitingList, callIds: readonly string[]): Promise<void>;
  /**
   * Entries of one history stream (keys.ts), newest first: ids below `before` (exclusive; from the
   * newest when undefined), at or after `since` (ms since the epoch), at most `count`.
   */
  historyRange(kind: HistoryKind, before: string | undefined, since: number, count: number): Promise<HistoryEntry[]>;
  /** Adds one entry to a history stream (a call that ended outside a tracked worker's finish), bounded as `bound` says. */
  addHistory(kind: HistoryKind, callId: string, record: string, bound: { readonly entries: number; readonly ageMs: number }): Promise<void>;
  /** Usable now (a best-effort write is skipped, not waited for, when it is not). */
  readonly connected: boolean;
  ready(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}
