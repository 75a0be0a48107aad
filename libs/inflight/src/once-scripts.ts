// The Lua scripts of `ctx.once` (once-marks.ts): a call's effects hash, marked started, completed or
// forgotten, each in one step. Registered with the others in scripts.ts.

/** Keeps a key's TTL at least ARGV[3] (the call's: effects live as long as its stored outcome), never shorter. */
const atLeastTtl = `if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end`;

/**
 * effectStart(effects; name, mark, ttlMs) → 'R' run it (marked started by this run) | 'D<json>' an
 * earlier run finished it | 'P' an earlier run started it and never finished (its worker died).
 */
export const effectStart = `local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then
  if string.byte(v, 1) == 68 then return v end
  if v == ARGV[2] then return 'R' end
  return 'P'
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
${atLeastTtl}
return 'R'`;

/** effectComplete(effects; name, 'D' .. json, ttlMs) → 1 stored | 0 a result was there already (the first wins). */
export const effectComplete = `local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and string.byte(v, 1) == 68 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
${atLeastTtl}
return 1`;

/** effectForget(effects; name, mark) → 1 if this run's start mark was dropped (its `fn` threw). */
export const effectForget = `if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 1
end
return 0`;
