import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { silentLogger, type Logger } from '@warren/logger';
import { assertKeyPrefix, historyBounds, type HistoryBounds } from './keys';
import { checkPositiveInts } from '@warren/config';

/**
 * Where Redis is. A URL or `RedisOptions` for a single node; `RedisOptions`
 * with `sentinels` and `name` for Sentinel; `{ cluster }` for Redis Cluster;
 * `{ client }` to share a client you own (it is not closed, and keeps its own
 * options, so give it `enableAutoPipelining` yourself).
 *
 * @example 'redis://127.0.0.1:6379'
 * @example { sentinels: [{ host: 's1', port: 26379 }], name: 'mymaster' }
 * @example { cluster: [{ host: 'r1', port: 7000 }, { host: 'r2', port: 7000 }] }
 */
export type RedisConfig =
  | string
  | RedisOptions
  | { readonly cluster: readonly ClusterNode[]; readonly clusterOptions?: ClusterOptions }
  | { readonly client: Redis | Cluster };

/** Options shared by the tracker (workers) and the view (operators, callers). */
export interface StoreOptions {
  /** @default 'redis://127.0.0.1:6379' */
  readonly redis?: RedisConfig;
  /** Prefix of every key and channel; workers and views of one cluster must agree. @default 'warren' */
  readonly keyPrefix?: string;
  /** A Redis command not answered within this long counts as Redis being down. @default 1000 */
  readonly commandTimeoutMs?: number;
  /** @default a silent logger */
  readonly logger?: Logger;
}

export interface TrackerOptions extends StoreOptions {
  /**
   * How long a worker's claim on a call lasts without renewal. A worker that
   * dies is noticed this long after its last renewal, and its call is taken
   * over by whichever worker gets the redelivery. @default 15000
   */
  readonly leaseMs?: number;
  /**
   * Period of the one timer per worker: heartbeat, lease renewals of calls
   * running longer than a third of `leaseMs`, cancel checks, and probing Redis
   * while degraded. At most `leaseMs / 3`. @default 1000
   */
  readonly heartbeatMs?: number;
  /** Deliveries of one call that may start its handler; the next is dead-lettered with WorkerLostError. @default 3 */
  readonly maxAttempts?: number;
  /** How long a finished call's response is kept past its deadline (redeliveries, lost replies). @default 300000 */
  readonly resultTtlMs?: number;
  /** How long a running call's record outlives its deadline if nobody finishes it. @default 60000 */
  readonly graceMs?: number;
  /** While another live worker runs the same call, how often to look for its result. @default 100 */
  readonly waitPollMs?: number;
  /**
   * A takeover (a call whose worker died) with less than this left before its deadline is not started: the
   * call is recorded expired and answered DeadlineExceeded (-32001) at once. @default 1000
   */
  readonly takeoverMinMs?: number;
  /**
   * How much outcome history the finish script keeps (keys.ts, history streams): entries and age of
   * successes and of failures; `false` keeps none. Workers of one cluster should agree (each trims
   * to its own bounds when it writes). @default {@link historyBounds}: 2,000 successes up to 1 h, 10,000 failures up to 24 h
   */
  readonly history?: HistoryBounds | false;
  /**
   * Fail calls with ServiceUnavailableError (-32002, the handler not run)
   * while Redis is unavailable, instead of running them untracked. @default false
   */
  readonly requireTracking?: boolean;
  /** How long `start()` waits for Redis before the worker starts in degraded mode. @default 2000 */
  readonly connectTimeoutMs?: number;
  /**
   * Which deliveries wait for their claim's reply before the handler starts. `'redeliveries'`: a first
   * delivery (no run of it can exist anywhere) starts once its claim is written to Redis, and the reply
   * to the claim is awaited alongside; redeliveries and retries, which may meet another run or a stored
   * outcome, wait. `'always'`: every call waits (one Redis round trip more per call). @default 'redeliveries'
   */
  readonly awaitClaim?: 'redeliveries' | 'always';
}

export interface ViewOptions extends StoreOptions {
  /** How long a cancel mark for a call no worker has taken yet is kept, when its deadline is not given. @default 300000 */
  readonly cancelTtlMs?: number;
  /** How long a running call's record outlives its deadline (must match the workers'). @default 60000 */
  readonly graceMs?: number;
  /** The history bounds `recordOutcome` trims to (should match the workers' `history`). @default {@link historyBounds} */
  readonly history?: HistoryBounds;
}

export type ResolvedTrackerOptions = Required<Omit<TrackerOptions, 'redis'>> & { readonly redis: RedisConfig };
export type ResolvedViewOptions = Required<Omit<ViewOptions, 'redis'>> & { readonly redis: RedisConfig };

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export const trackerDefaults = {
  keyPrefix: 'warren',
  commandTimeoutMs: 1000,
  leaseMs: 15_000,
  heartbeatMs: 1000,
  maxAttempts: 3,
  resultTtlMs: 300_000,
  graceMs: 60_000,
  waitPollMs: 100,
  takeoverMinMs: 1000,
  requireTracking: false,
  connectTimeoutMs: 2000,
  awaitClaim: 'redeliveries',
} as const;

export const viewDefaults = {
  keyPrefix: 'warren',
  commandTimeoutMs: 1000,
  cancelTtlMs: 300_000,
  graceMs: 60_000,
} as const;

export function resolveTrackerOptions(options: TrackerOptions = {}): ResolvedTrackerOptions {
  const resolved: ResolvedTrackerOptions = {
    redis: options.redis ?? DEFAULT_REDIS_URL,
    keyPrefix: options.keyPrefix ?? trackerDefaults.keyPrefix,
    commandTimeoutMs: options.commandTimeoutMs ?? trackerDefaults.commandTimeoutMs,
    leaseMs: options.leaseMs ?? trackerDefaults.leaseMs,
    heartbeatMs: options.heartbeatMs ?? trackerDefaults.heartbeatMs,
    maxAttempts: options.maxAttempts ?? trackerDefaults.maxAttempts,
    resultTtlMs: options.resultTtlMs ?? trackerDefaults.resultTtlMs,
    graceMs: options.graceMs ?? trackerDefaults.graceMs,
    waitPollMs: options.waitPollMs ?? trackerDefaults.waitPollMs,
    takeoverMinMs: options.takeoverMinMs ?? trackerDefaults.takeoverMinMs,
    requireTracking: options.requireTracking ?? trackerDefaults.requireTracking,
    connectTimeoutMs: options.connectTimeoutMs ?? trackerDefaults.connectTimeoutMs,
    awaitClaim: options.awaitClaim ?? trackerDefaults.awaitClaim,
    history: options.history ?? historyBounds,
    logger: options.logger ?? silentLogger(),
  };
  assertKeyPrefix(resolved.keyPrefix);
  if (resolved.awaitClaim !== 'redeliveries' && resolved.awaitClaim !== 'always') throw new RangeError(`TrackerOptions.awaitClaim must be 'redeliveries' or 'always', got ${String(resolved.awaitClaim)}`);
  checkPositiveInts('TrackerOptions', resolved, ['commandTimeoutMs', 'leaseMs', 'heartbeatMs', 'maxAttempts', 'resultTtlMs', 'graceMs', 'waitPollMs', 'takeoverMinMs', 'connectTimeoutMs']);
  if (resolved.history !== false) {
    for (const kind of ['done', 'failed'] as const) checkPositiveInts(`TrackerOptions.history.${kind}`, { ...resolved.history[kind] }, ['entries', 'ageMs']);
  }
  if (resolved.heartbeatMs * 3 > resolved.leaseMs) {
    throw new RangeError(`TrackerOptions.heartbeatMs must be at most leaseMs / 3 (so a lease is renewed before it runs out), got ${resolved.heartbeatMs} with leaseMs ${resolved.leaseMs}`);
  }
  return resolved;
}

export function resolveViewOptions(options: ViewOptions = {}): ResolvedViewOptions {
  const resolved: ResolvedViewOptions = {
    redis: options.redis ?? DEFAULT_REDIS_URL,
    keyPrefix: options.keyPrefix ?? viewDefaults.keyPrefix,
    commandTimeoutMs: options.commandTimeoutMs ?? viewDefaults.commandTimeoutMs,
    cancelTtlMs: options.cancelTtlMs ?? viewDefaults.cancelTtlMs,
    graceMs: options.graceMs ?? viewDefaults.graceMs,
    history: options.history ?? historyBounds,
    logger: options.logger ?? silentLogger(),
  };
  for (const kind of ['done', 'failed'] as const) checkPositiveInts(`ViewOptions.history.${kind}`, { ...resolved.history[kind] }, ['entries', 'ageMs']);
  assertKeyPrefix(resolved.keyPrefix);
  checkPositiveInts('ViewOptions', resolved, ['commandTimeoutMs', 'cancelTtlMs', 'graceMs']);
  return resolved;
}
