// Cancels: the cancel script (signal the owner, or mark a call nobody took yet) and the index of live
// cancel marks a (re)subscribing worker reads back. Registered in scripts.ts.
import { fields, now } from './lua-prelude';

/**
 * markIndex(index; callId, ttlMs) → 1. Lists a cancel mark until it expires (a separate command from
 * the cancel script, before it: the index is in a slot of its own on Redis Cluster), drops the entries
 * that expired, and keeps the key as long as its longest mark. An entry is only ever a reason to wait
 * for a claim's reply, so one for a call that turned out to be running already costs nothing.
 */
export const markIndex = `${now}
local expires = now + tonumber(ARGV[2])
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) < expires then redis.call('ZADD', KEYS[1], expires, ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/** liveMarks(index; max) → {callId1, msLeft1, ...}: the live marks, longest-lived first, at most `max`. */
export const liveMarks = `${now}
local live = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
local out = {}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = tonumber(live[i + 1]) - now
end
return out`;

/**
 * cancel(call; markTtlMs, channelPrefix, callId, marksChannel)
 * → {'marked', lastWorker, markTtlMs} not started: whoever takes it answers Cancelled | {'signalled', worker, receivers}
 *   | {'cancelled', worker} already cancelled | {'finished', state} too late.
 * A mark is also published on `marksChannel` as "<ttlMs> <callId>": every worker keeps it that long, so
 * a first delivery of the call, which starts while its claim is on the way, is held back to wait for it.
 */
export const cancel = `${now}
${fields}
local key = KEYS[1]
local v = redis.call('GET', key)
if not v then
  local f = decode('C')
  f[7], f[10] = '1', now
  redis.call('SET', key, encode(f), 'PX', ARGV[1])
  redis.call('PUBLISH', ARGV[4], ARGV[1] .. ' ' .. ARGV[3])
  return {'marked', '', tonumber(ARGV[1])}
end
local f = decode(v)
local state = f[1]
if state == 'Q' or state == 'W' then
  f[1], f[7], f[10] = 'C', '1', now
  redis.call('SET', key, encode(f), 'KEEPTTL')
  local ttl = redis.call('PTTL', key)
  redis.call('PUBLISH', ARGV[4], ttl .. ' ' .. ARGV[3])
  return {'marked', f[4], ttl}
end
if state == 'R' then
  f[7] = '1'
  redis.call('SET', key, encode(f), 'KEEPTTL')
  local n = redis.call('PUBLISH', ARGV[2] .. f[4], ARGV[3])
  return {'signalled', f[4], n}
end
if state == 'C' then return {'cancelled', f[4]} end
return {'finished', names[state] or state}`;
