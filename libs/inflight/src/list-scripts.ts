// The lists of calls no worker runs now (retrying, queued: scored by deadline) and of delayed calls
// (scored by due time). Registered in scripts.ts.
import { now } from './lua-prelude';

/**
 * waitingAdd(list; callId, deadline, ttlMs) → 1. Lists a call no worker runs now (retrying: waiting in
 * a delay queue; queued: marked by its caller) in a separate command from its record's change (the list
 * is in a slot of its own on Redis Cluster), drops the entries past their deadline, and keeps the key at
 * least `ttlMs`.
 */
export const waitingAdd = `${now}
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`;

/**
 * delayedAdd(delayed, delayedCalls; callId, dueAt, entry, ttlMs, max) → 1. Lists a delayed call, drops
 * entries already due (a bounded number per add), then the latest-due ones past `max`; both keys live
 * `ttlMs` at least (never shortened).
 */
export const delayedAdd = `${now}
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, 1000)
local over = redis.call('ZCARD', KEYS[1]) - #gone - tonumber(ARGV[5])
if over > 0 then for _, id in ipairs(redis.call('ZRANGE', KEYS[1], -over, -1)) do gone[#gone + 1] = id end end
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < tonumber(ARGV[4]) then redis.call('PEXPIRE', key, ARGV[4]) end
end
return 1`;

/** delayedList(delayed, delayedCalls; max) → the entries of the calls not yet due, soonest first, at most `max`. */
export const delayedList = `${now}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'LIMIT', 0, tonumber(ARGV[1]))
if #ids == 0 then return {} end
local entries = redis.call('HMGET', KEYS[2], unpack(ids))
local out = {}
for i = 1, #ids do if entries[i] then out[#out + 1] = entries[i] end end
return out`;

/** waitingList(list; max) → the ids of the listed calls whose deadline has not passed (at most `max`); drops the others. */
export const waitingList = `${now}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'LIMIT', 0, tonumber(ARGV[1]))`;
