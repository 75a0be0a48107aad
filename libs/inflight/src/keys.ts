/**
 * Every Redis key and channel the in-flight store uses, built in this one
 * place from a prefix, and the TTL each of them gets. Nothing else in the
 * package writes a key name.
 *
 * Layout (prefix `warren`, see README.md for the full table):
 *
 *   warren:rec:{<callId>}              string: one call's record, in flight or finished
 *   warren:once:{<callId>}             hash: effect name → the call's ctx.once marks and results
 *   warren:progress:{<callId>}         string: a running call's latest progress (JSON), beside its record
 *   warren:progress-log:{<callId>}     list: a call's last progress reports (JSON), oldest first
 *   warren:attempts:{<callId>}         list: a call's earlier attempts (JSON), written by the claim that ends one
 *   warren:{warren:workers}            hash: service/instance → heartbeat entry (JSON)
 *   warren:{warren:workers}:seen       sorted set: service/instance → when its entry expires
 *   warren:{warren:retrying}           sorted set: call id → deadline, of calls waiting in a delay queue
 *   warren:{warren:queued}             sorted set: call id → deadline, of calls marked queued by their caller (trackQueued)
 *   warren:{warren:delayed}            sorted set: call id → when it is due, of delayed calls not yet due (delayed.ts)
 *   warren:{warren:delayed}:calls      hash: call id → the delayed call's entry (JSON), beside the sorted set
 *   warren:cancel:<instanceId>         pub/sub channel: cancel requests for that worker's calls
 *   warren:cancel-marks                pub/sub channel: every cancel mark, to every worker
 *   warren:{warren:cancel-marks}       sorted set: call id → when its cancel mark expires, read back by a worker that (re)subscribes
 *   warren:method:<method>             string: the method directory, which service serves it (JSON)
 *   warren:{warren:history}:done       stream: the last finished calls that succeeded (history.ts)
 *   warren:{warren:history}:failed     stream: the last calls that failed, were cancelled or expired, kept longer
 *
 * Hash tags (`{...}`) put the keys one script touches in one Redis Cluster
 * slot: a call's scripts touch its one key; the heartbeat script touches the
 * two worker keys, which share the tag.
 */
export interface Keys {
  readonly prefix: string;
  /** The record of one call. TTL: {@link callTtlMs} while running, {@link resultTtlMs} once finished. */
  call(callId: string): string;
  /** The `ctx.once` effects of one call (same slot as its record). TTL: {@link resultTtlMs}, like its stored outcome. */
  effects(callId: string): string;
  /** A call's latest progress (JSON), in the slot of its record. TTL: what its record had left when it was written. */
  progress(callId: string): string;
  /**
   * A call's last {@link progressLogEntries} progress reports (JSON each, with their times), oldest first, in
   * the slot of its record, pushed by the progress script. TTL: what a finished record of the call gets.
   */
  progressLog(callId: string): string;
  /**
   * A call's earlier attempts, oldest first (JSON each: attempt, worker, startedAt, endedAt, outcome), in the
   * slot of its record: pushed by the claim script when a new attempt replaces one (a takeover, a retry, a
   * call given back), which derives this name from the record's (`attemptsKeyLua`: keep the two in step).
   * TTL: the finished TTL of the claim that pushed it, as long as the outcome it leads to.
   */
  attempts(callId: string): string;
  /** Heartbeat entries of every worker instance under this prefix. TTL: {@link workersTtlMs}, refreshed by each beat. */
  readonly workers: string;
  /** When each worker's entry expires (same hash tag as {@link Keys.workers}). TTL: as {@link Keys.workers}. */
  readonly workersSeen: string;
  /**
   * The calls that went to wait in a delay queue (retrying), scored by deadline, so the view lists
   * calls no worker runs. Entries past their deadline go at each add and each read; finished ones
   * when the view reads them. TTL: {@link callTtlMs} of the latest deadline added, never shortened.
   */
  readonly retrying: string;
  /**
   * The calls their callers marked queued (trackQueued), scored by deadline, so the view lists calls
   * waiting in RabbitMQ. A worker's claim of a marked call drops it; entries past their deadline go at
   * each add and each read, and the view drops those it finds taken or finished. TTL: as {@link Keys.retrying}.
   */
  readonly queued: string;
  /**
   * Delayed calls not yet due, scored by due time (delayed.ts); bounded. TTL: the latest deadline
   * listed plus `graceMs`, never shortened; entries leave once due.
   */
  readonly delayed: string;
  /** Each delayed call's entry (JSON), in the slot of {@link Keys.delayed}. TTL: as {@link Keys.delayed}. */
  readonly delayedCalls: string;
  /** The field of one worker in {@link Keys.workers}. */
  workerField(service: string, instanceId: string): string;
  /** Where cancel requests for the calls one worker instance owns are published. Channels have no TTL; nothing is stored. */
  cancelChannel(instanceId: string): string;
  /** Where every cancel mark (a call cancelled before any worker claimed it) is published, to every worker. */
  readonly cancelMarks: string;
  /**
   * Every live cancel mark, call id → when it expires (Redis time, ms): what a worker that was not
   * subscribed when a mark was published reads back. TTL: the longest mark's, refreshed by each mark.
   */
  readonly cancelMarkIndex: string;
  /** The method directory's entry of one method (directory.ts). TTL: {@link directoryTtlMs}, refreshed by its service. */
  method(name: string): string;
  /**
   * The outcome history: one stream of successes, one of failures (failed, cancelled, expired),
   * each bounded by {@link historyBounds} in entries and age. TTL: the stream's age bound, refreshed by each write.
   */
  history(kind: HistoryKind): string;
}

/** The two history streams: successes, and everything else (kept longer). */
export type HistoryKind = 'done' | 'failed';

/**
 * How much history is kept: successes are many and cheap to lose, failures are what an operator
 * looks for hours later. Count bounds are approximate (`MAXLEN ~`, within one stream node: ~100 entries).
 */
export type HistoryBounds = Readonly<Record<HistoryKind, { readonly entries: number; readonly ageMs: number }>>;

export const historyBounds: HistoryBounds = {
  done: { entries: 2000, ageMs: 3_600_000 },
  failed: { entries: 10_000, ageMs: 24 * 3_600_000 },
};

/** How many progress reports of a call its progress log keeps (the latest ones). */
export const progressLogEntries = 50;

const prefixPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

export function assertKeyPrefix(prefix: string): void {
  if (!prefixPattern.test(prefix)) throw new RangeError(`InflightOptions.keyPrefix must match ${prefixPattern.source}, got ${JSON.stringify(prefix)}`);
}

export function keys(prefix: string): Keys {
  assertKeyPrefix(prefix);
  return {
    prefix,
    call: (callId) => `${prefix}:rec:{${callId}}`,
    effects: (callId) => `${prefix}:once:{${callId}}`,
    progress: (callId) => `${prefix}:progress:{${callId}}`,
    progressLog: (callId) => `${prefix}:progress-log:{${callId}}`,
    attempts: (callId) => `${prefix}:attempts:{${callId}}`,
    workers: `${prefix}:{${prefix}:workers}`,
    workersSeen: `${prefix}:{${prefix}:workers}:seen`,
    retrying: `${prefix}:{${prefix}:retrying}`,
    queued: `${prefix}:{${prefix}:queued}`,
    delayed: `${prefix}:{${prefix}:delayed}`,
    delayedCalls: `${prefix}:{${prefix}:delayed}:calls`,
    // '/' cannot occur in a service name or an instance id (both are AMQP resource names).
    workerField: (service, instanceId) => `${service}/${instanceId}`,
    cancelChannel: (instanceId) => `${prefix}:cancel:${instanceId}`,
    cancelMarks: `${prefix}:cancel-marks`,
    cancelMarkIndex: `${prefix}:{${prefix}:cancel-marks}`,
    method: (name) => `${prefix}:method:${name}`,
    history: (kind) => `${prefix}:{${prefix}:history}:${kind}`,
  };
}

/** Lua: the {@link Keys.attempts} key of the call whose record key is `key` (the claim script knows only the record's). */
export const attemptsKeyLua = `local function attemptsKey(key) return (string.gsub(key, ':rec:(%b{})$', ':attempts:%1')) end`;

/** The smallest TTL any key gets: a call whose deadline is already past still lives this long. */
export const minTtlMs = 1000;

/**
 * TTL of a running call's record: until its deadline, plus `graceMs` so a
 * status lookup right after the deadline still finds it. Bounded however the
 * process that wrote it ends.
 */
export function callTtlMs(deadline: number, now: number, graceMs: number): number {
  return Math.max(minTtlMs, Math.ceil(deadline - now) + graceMs);
}

/**
 * TTL of a finished call's record (its stored response): past the deadline by
 * `resultTtlMs`, so a redelivery (which cannot come after the deadline, the
 * message expires) or a caller recovering a lost reply still finds it.
 */
export function resultTtlMs(deadline: number, now: number, keepMs: number): number {
  return Math.max(minTtlMs, Math.ceil(deadline - now) + keepMs);
}

/** TTL of a cancel mark for a call no worker has seen yet (its deadline is unknown to whoever cancels). */
export function cancelMarkTtlMs(deadline: number | undefined, now: number, graceMs: number, defaultMs: number): number {
  return deadline === undefined ? defaultMs : callTtlMs(deadline, now, graceMs);
}

/** How long a worker counts as live after its last heartbeat: three missed beats. */
export function workerEntryTtlMs(heartbeatMs: number): number {
  return heartbeatMs * 3;
}

/**
 * TTL of the worker keys, refreshed (never shortened) by each beat: long
 * enough for the slowest-beating worker, so they vanish soon after the last
 * worker stops.
 */
export function workersTtlMs(heartbeatMs: number): number {
  return Math.max(60_000, heartbeatMs * 10);
}

/**
 * TTL of a method directory entry: long enough to outlast any outage a caller
 * should be told about by name (services refresh it hourly while they run), so
 * a method nobody serves any more is forgotten within a week.
 */
export const directoryTtlMs = 7 * 24 * 3_600_000;

/** The hash tag of a key (what Redis Cluster hashes), or the whole key when it has none. */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return key;
  return key.slice(open + 1, close);
}
