import type { Redis } from 'ioredis';
import { createRedis } from '@warren/redis';
import { definitionsTtlMs, occurrenceTtlMs, scheduleKeys, type ScheduleKeys } from './keys';
import type { Schedule } from './spec';
import type { ClaimResult, OccurrenceEnd, ScheduleState, ScheduleStore } from './store-port';

/** Where the Redis store connects. */
export interface RedisScheduleStoreOptions {
  /** Redis URL, e.g. `redis://127.0.0.1:6379`. */
  readonly url: string;
  /** Put before every key (keys.ts); give tests a unique one. @default 'warren' */
  readonly keyPrefix?: string;
  /** A command not answered in this time fails. @default 2000 */
  readonly commandTimeoutMs?: number;
}

// KEYS: lease, occurrence. ARGV: token, occurrence TTL. Only the lease holder claims; a claim
// left by another token (its holder lost the lease, so it died or stalled before firing) is taken over.
const claimScript = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'not_holder' end
local v = redis.call('GET', KEYS[2])
if v == false or v == 'queued' or (string.sub(v, 1, 8) == 'claimed:' and v ~= 'claimed:' .. ARGV[1]) then
  redis.call('SET', KEYS[2], 'claimed:' .. ARGV[1], 'PX', ARGV[2])
  return 'claimed'
end
if v == 'claimed:' .. ARGV[1] then return 'claimed' end
return 'handled'`;

// KEYS: lease, defs, state. ARGV: token, lease TTL, definitions TTL. Takes a free lease or extends one's own.
const leaseScript = `
local v = redis.call('GET', KEYS[1])
if v ~= false and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return 1`;

const releaseScript = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Schedules in Redis: durable (as durable as the Redis), shared by every scheduler. Connects
 * lazily; a command fails within `commandTimeoutMs` when Redis does not answer.
 *
 * @example
 * const store = new RedisScheduleStore({ url: 'redis://127.0.0.1:6379', keyPrefix: 'warren' });
 */
export class RedisScheduleStore implements ScheduleStore {
  readonly durable = true;
  private readonly redis: Redis;
  private readonly keys: ScheduleKeys;

  constructor(options: RedisScheduleStoreOptions) {
    this.keys = scheduleKeys(options.keyPrefix ?? 'warren');
    // The command timeout is @warren/redis's: a reply that came while the event loop was blocked is not failed
    // (ioredis's own would fail it, and a scheduler would take its lease for lost).
    this.redis = createRedis(options.url, { lazyConnect: true, commandTimeoutMs: options.commandTimeoutMs ?? 2000, maxRetriesPerRequest: 1, enableOfflineQueue: true });
    // Errors surface on the commands; the client's own 'error' events would otherwise be unhandled.
    this.redis.on('error', () => undefined);
  }

  async list(): Promise<Schedule[]> {
    const all = await this.redis.hgetall(this.keys.defs);
    return Object.values(all).map((v) => JSON.parse(v) as Schedule).sort((a, b) => a.name.localeCompare(b.name));
  }

  async get(name: string): Promise<Schedule | undefined> {
    const v = await this.redis.hget(this.keys.defs, name);
    return v === null ? undefined : (JSON.parse(v) as Schedule);
  }

  async put(schedule: Schedule, replace: boolean): Promise<boolean> {
    const json = JSON.stringify(schedule);
    const done = replace ? (await this.redis.hset(this.keys.defs, schedule.name, json), 1) : await this.redis.hsetnx(this.keys.defs, schedule.name, json);
    await this.redis.pexpire(this.keys.defs, definitionsTtlMs);
    return done === 1;
  }

  async remove(name: string): Promise<boolean> {
    const [[, removed]] = (await this.redis.multi().hdel(this.keys.defs, name).hdel(this.keys.state, name).exec()) as [[unknown, number], unknown];
    return removed === 1;
  }

  async states(names: readonly string[]): Promise<Map<string, ScheduleState>> {
    const out = new Map<string, ScheduleState>();
    if (names.length === 0) return out;
    const values = await this.redis.hmget(this.keys.state, ...names);
    names.forEach((name, i) => out.set(name, values[i] ? (JSON.parse(values[i]) as ScheduleState) : {}));
    return out;
  }

  async setState(name: string, state: ScheduleState): Promise<void> {
    await this.redis.multi().hset(this.keys.state, name, JSON.stringify(state)).pexpire(this.keys.state, definitionsTtlMs).exec();
  }

  async lease(token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(leaseScript, 3, this.keys.lease, this.keys.defs, this.keys.state, token, ttlMs, definitionsTtlMs)) === 1;
  }

  async release(token: string): Promise<void> {
    await this.redis.eval(releaseScript, 1, this.keys.lease, token);
  }

  async claim(name: string, occurrence: number, token: string): Promise<ClaimResult> {
    return (await this.redis.eval(claimScript, 2, this.keys.lease, this.keys.occurrence(name, occurrence), token, occurrenceTtlMs)) as ClaimResult;
  }

  async end(name: string, occurrence: number, how: OccurrenceEnd): Promise<void> {
    await this.redis.set(this.keys.occurrence(name, occurrence), how, 'PX', occurrenceTtlMs);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
