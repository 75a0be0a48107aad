// The workers' heartbeat entries: beat, goodbye, and the live workers' list. Registered in scripts.ts.
import { now } from './lua-prelude';

/** heartbeat(workers, seen; field, entryJson, entryTtlMs, keyTtlMs) → Redis time. Drops the entries of workers that stopped beating. */
export const heartbeat = `${now}
local expires = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], expires, ARGV[1])
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for i = 1, #dead do redis.call('HDEL', KEYS[1], dead[i]) end
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
end
return now`;

/** goodbye(workers, seen; field): a stopping worker removes its entry. */
export const goodbye = `redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`;

/** workers(workers, seen) → {redisNow, field1, entry1, expires1, ...} of the live workers only. */
export const workers = `${now}
local live = redis.call('ZRANGEBYSCORE', KEYS[2], now, '+inf', 'WITHSCORES')
local out = {now}
for i = 1, #live, 2 do
  local entry = redis.call('HGET', KEYS[1], live[i])
  if entry then
    out[#out + 1] = live[i]
    out[#out + 1] = entry
    out[#out + 1] = tonumber(live[i + 1])
  end
end
return out`;
