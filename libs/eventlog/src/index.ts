/**
 * @warren/eventlog — the little Redis storage the example services need:
 * capped, expiring lists of events (what the audit service received) and
 * small expiring records (a job's progress). Services may not import ioredis
 * (see eslint.config.mjs); this package is where that driver lives for them
 * (its client made by @warren/redis, with command timeouts a blocked event loop cannot fake).
 *
 * Every key is built by `eventLogKeys` and every write sets a TTL, so nothing
 * outlives its usefulness even if every process dies.
 */
import type { Redis } from 'ioredis';
import { createRedis } from '@warren/redis';
import { eventLogKeys, type EventLogKeys } from './keys';
import { checkInt, checkPositiveInts } from '@warren/config';

export { eventLogKeys, type EventLogKeys } from './keys';

/** Any value JSON can carry (kept local so this package depends on nothing of Warren's). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What services use; Redis in production, memory in unit tests. */
export interface EventStore {
  /** Adds an entry at the head of a stream, trims the stream to `maxEntries` and refreshes its TTL. */
  append(stream: string, entry: Json): Promise<void>;
  /** The newest `limit` entries, newest first. */
  recent(stream: string, limit: number): Promise<Json[]>;
  /** Stores a record for `ttlMs` (default: the store's `ttlMs`). */
  put(name: string, value: Json, ttlMs?: number): Promise<void>;
  /** A stored record, or undefined when it is absent or expired. */
  get(name: string): Promise<Json | undefined>;
  close(): Promise<void>;
}

export interface EventLogOptions {
  /** Redis URL, e.g. `redis://127.0.0.1:6379`. */
  readonly url: string;
  /** Put before every key; give tests a unique one. @default 'warren' */
  readonly keyPrefix?: string;
  /** Longest a stream gets; older entries are dropped. @default 1000 */
  readonly maxEntries?: number;
  /** TTL of streams (refreshed on append) and the default TTL of records. @default 86400000 (one day) */
  readonly ttlMs?: number;
  /** A command not answered in this time fails (so a handler never hangs on a dead Redis). @default 2000 */
  readonly commandTimeoutMs?: number;
}

export const eventLogDefaults = { keyPrefix: 'warren', maxEntries: 1000, ttlMs: 86_400_000, commandTimeoutMs: 2000 } as const;

type Resolved = Required<EventLogOptions>;

export function resolveEventLogOptions(options: EventLogOptions): Resolved {
  const resolved: Resolved = { ...eventLogDefaults, ...options };
  if (typeof resolved.url !== 'string' || resolved.url.length === 0) throw new RangeError('EventLogOptions.url must be a non-empty Redis URL');
  checkPositiveInts('EventLogOptions', resolved, ['maxEntries', 'ttlMs', 'commandTimeoutMs']);
  eventLogKeys(resolved.keyPrefix);
  return resolved;
}

/**
 * Redis-backed {@link EventStore}. Connects lazily: a service starts even when
 * Redis is down, and each operation then fails within `commandTimeoutMs`.
 *
 * @example
 * const log = new RedisEventLog({ url: 'redis://127.0.0.1:6379' });
 * await log.append('audit', { method: 'update', params: [1, 2] });
 * await log.recent('audit', 10); // [{ method: 'update', params: [1, 2] }]
 * await log.close();
 */
export class RedisEventLog implements EventStore {
  private readonly o: Resolved;
  private readonly keys: EventLogKeys;
  private readonly redis: Redis;
  private closing: Promise<void> | undefined;

  constructor(options: EventLogOptions) {
    this.o = resolveEventLogOptions(options);
    this.keys = eventLogKeys(this.o.keyPrefix);
    // The command timeout is @warren/redis's: a reply that came while a handler blocked the event loop is not failed.
    this.redis = createRedis(this.o.url, {
      lazyConnect: true,
      commandTimeoutMs: this.o.commandTimeoutMs,
      maxRetriesPerRequest: 1,
      // How long disconnect() waits for a socket to close before destroying it (its timer would hold the process).
      disconnectTimeout: 200,
      // Reconnect with a capped, jittered backoff; never give up (Redis may come back).
      retryStrategy: (times) => Math.min(2000, 50 * 2 ** Math.min(times, 6)) + Math.floor(Math.random() * 100),
    });
    // Errors surface on the operations; without a listener ioredis would print them.
    this.redis.on('error', () => undefined);
  }

  async append(stream: string, entry: Json): Promise<void> {
    const key = this.keys.stream(stream);
    await this.redis.multi().lpush(key, JSON.stringify(entry)).ltrim(key, 0, this.o.maxEntries - 1).pexpire(key, this.o.ttlMs).exec();
  }

  async recent(stream: string, limit: number): Promise<Json[]> {
    const n = Math.max(0, Math.min(Math.floor(limit), this.o.maxEntries));
    if (n === 0) return [];
    const raw = await this.redis.lrange(this.keys.stream(stream), 0, n - 1);
    return raw.flatMap((text) => parse(text));
  }

  async put(name: string, value: Json, ttlMs = this.o.ttlMs): Promise<void> {
    checkInt('ttlMs', ttlMs);
    await this.redis.set(this.keys.record(name), JSON.stringify(value), 'PX', ttlMs);
  }

  async get(name: string): Promise<Json | undefined> {
    const raw = await this.redis.get(this.keys.record(name));
    return raw === null ? undefined : parse(raw)[0];
  }

  /** Resolves when Redis answers PING; for readiness checks. */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  /** Idempotent. Quits politely when connected; otherwise (connecting, reconnecting) stops at once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.redis.status !== 'ready') {
        this.redis.disconnect();
        return;
      }
      await this.redis.quit().catch(() => undefined);
      this.redis.disconnect();
    })();
    return this.closing;
  }
}

/** Entries are written by this package as JSON; anything else in the list is skipped, not thrown. */
function parse(text: string): Json[] {
  try {
    return [JSON.parse(text) as Json];
  } catch {
    return [];
  }
}

/**
 * In-memory {@link EventStore} with the same caps and TTLs, for unit tests
 * and for running a service without Redis.
 */
export class MemoryEventLog implements EventStore {
  private readonly streams = new Map<string, { entries: string[]; expires: number }>();
  private readonly records = new Map<string, { value: string; expires: number }>();
  private readonly keys = eventLogKeys('mem');
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: Partial<Pick<EventLogOptions, 'maxEntries' | 'ttlMs'>> & { now?: () => number } = {}) {
    this.maxEntries = options.maxEntries ?? eventLogDefaults.maxEntries;
    this.ttlMs = options.ttlMs ?? eventLogDefaults.ttlMs;
    this.now = options.now ?? Date.now;
  }

  async append(stream: string, entry: Json): Promise<void> {
    const key = this.keys.stream(stream);
    const live = this.liveStream(key);
    live.unshift(JSON.stringify(entry));
    live.length = Math.min(live.length, this.maxEntries);
    this.streams.set(key, { entries: live, expires: this.now() + this.ttlMs });
  }

  async recent(stream: string, limit: number): Promise<Json[]> {
    return this.liveStream(this.keys.stream(stream)).slice(0, Math.max(0, limit)).flatMap(parse);
  }

  async put(name: string, value: Json, ttlMs = this.ttlMs): Promise<void> {
    this.records.set(this.keys.record(name), { value: JSON.stringify(value), expires: this.now() + ttlMs });
  }

  async get(name: string): Promise<Json | undefined> {
    const r = this.records.get(this.keys.record(name));
    return r && r.expires > this.now() ? parse(r.value)[0] : undefined;
  }

  async close(): Promise<void> {
    this.streams.clear();
    this.records.clear();
  }

  private liveStream(key: string): string[] {
    const s = this.streams.get(key);
    return s && s.expires > this.now() ? [...s.entries] : [];
  }
}
