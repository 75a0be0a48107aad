/**
 * The Lua scripts behind every state change of a call. One script per
 * transition, each atomic. Each touches one call's key (or the two worker
 * keys, which share a hash tag); the two on the hot path, claim and finish,
 * take a batch of calls, which on Redis Cluster is always a batch of one, so
 * every script stays in one slot there. They take the time from Redis itself
 * (TIME), so leases are judged on one clock however skewed the workers'
 * clocks are.
 *
 * A call record (hash) has: state (running | queued | done | failed |
 * cancelled | expired), worker, token, attempt, startedAt, lease (ms, Redis
 * clock), meta (service, method, deadline, JSON-RPC id as JSON; tab-separated),
 * cancel ('1' once asked), result (the response as JSON), code (its error
 * code, if any), finishedAt.
 */

const now = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * claim(call1..callN; worker, leaseMs, maxAttempts, workerLostCode,
 *   then per call: token, meta, attempt, runningTtlMs, finishedTtlMs)
 * → one reply per call: attempt (a number: claimed fresh) | {'run', attempt, previousOwner}
 *   | {'stored', result, code, state} | {'busy', owner, leaseLeftMs} | {'cancelled'} | {'dead', attempts, lastOwner}
 *
 * `meta` is what does not change over the call's life, in one field:
 * service, method, deadline and the JSON-RPC id (as JSON), tab-separated.
 *
 * Takes a batch of calls (the claims one worker makes within one tick) so a
 * busy worker sends one command for many calls. On Redis Cluster the batch
 * is always one call, so the script touches one slot. The common case, a
 * call nobody has seen, costs three cheap commands and no read.
 */
const claim = `${now}
local worker, leaseMs, maxAttempts, lostCode = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local function claim(key, token, meta, first, runningTtl, finishedTtl)
  if redis.call('HSETNX', key, 'state', 'running') == 1 then
    redis.call('HSET', key, 'worker', worker, 'token', token, 'attempt', first, 'startedAt', now, 'lease', now + leaseMs, 'meta', meta)
    redis.call('PEXPIRE', key, runningTtl)
    return tonumber(first)
  end
  local f = redis.call('HMGET', key, 'state', 'worker', 'lease', 'attempt', 'result', 'cancel', 'code')
  local state, owner, lease, attempt, result, cancel, code = f[1], f[2], f[3], f[4], f[5], f[6], f[7]
  if result or state == 'done' or state == 'failed' or state == 'expired' then
    return {'stored', result or '', code or '', state}
  end
  if state == 'cancelled' then
    redis.call('HSET', key, 'meta', meta)
    redis.call('PEXPIRE', key, finishedTtl)
    return {'cancelled'}
  end
  if state == 'running' and lease and tonumber(lease) > now then
    return {'busy', owner or '', tonumber(lease) - now}
  end
  if cancel == '1' then
    redis.call('HSET', key, 'state', 'cancelled', 'finishedAt', now)
    redis.call('HDEL', key, 'lease', 'token')
    redis.call('PEXPIRE', key, finishedTtl)
    return {'cancelled'}
  end
  local next = (tonumber(attempt) or 0) + 1
  if next > maxAttempts then
    redis.call('HSET', key, 'state', 'failed', 'code', lostCode, 'finishedAt', now)
    redis.call('HDEL', key, 'lease', 'token')
    redis.call('PEXPIRE', key, finishedTtl)
    return {'dead', next - 1, owner or ''}
  end
  redis.call('HSET', key, 'state', 'running', 'worker', worker, 'token', token, 'attempt', next, 'startedAt', now, 'lease', now + leaseMs, 'meta', meta)
  redis.call('PEXPIRE', key, runningTtl)
  return {'run', next, owner or ''}
end
local out = {}
for i = 1, #KEYS do
  local a = 4 + (i - 1) * 5
  out[i] = claim(KEYS[i], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])
end
return out`;

/**
 * finish(call1..callN; per call: state, result, finishedTtlMs, code)
 * → per call: 1 stored | 0 a result was already there.
 * The first result wins: a worker whose call was taken over, or that ran it
 * untracked, still stores its result if nobody did yet; nobody overwrites
 * one. Lease and token are left behind: `state` says they no longer count.
 * Batched like {@link claim}.
 */
const finish = `${now}
local function finish(key, state, result, ttl, code)
  if redis.call('HSETNX', key, 'result', result) == 0 then return 0 end
  redis.call('HSET', key, 'state', state, 'code', code, 'finishedAt', now)
  redis.call('PEXPIRE', key, ttl)
  return 1
end
local out = {}
for i = 1, #KEYS do
  local a = (i - 1) * 4
  out[i] = finish(KEYS[i], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4])
end
return out`;

/**
 * record(call; state, result, finishedTtlMs, code, worker, meta)
 * → 1 stored | 0 a result was already there. The outcome of a call that ran
 * unclaimed (Redis was down when it started), with what the call was, so a
 * redelivery or a caller that lost its reply still finds it.
 */
const record = `${now}
local key = KEYS[1]
if redis.call('HSETNX', KEYS[1], 'result', ARGV[2]) == 0 then return 0 end
redis.call('HSET', key, 'state', ARGV[1], 'code', ARGV[4], 'finishedAt', now)
if redis.call('HEXISTS', key, 'meta') == 0 then redis.call('HSET', key, 'worker', ARGV[5], 'meta', ARGV[6]) end
redis.call('PEXPIRE', key, ARGV[3])
return 1`;

/** release(call; token) → 1 if the unfinished call went back to 'queued' (its lease dropped, so the next delivery need not wait). */
const release = `local key = KEYS[1]
local f = redis.call('HMGET', key, 'state', 'token')
if f[1] == 'running' and f[2] == ARGV[1] then
  redis.call('HSET', key, 'state', 'queued')
  redis.call('HDEL', key, 'lease', 'token')
  return 1
end
return 0`;

/** renew(call; token, leaseMs) → 0 renewed | 1 renewed, and a cancel was asked | -1 no longer ours. */
const renew = `${now}
local key = KEYS[1]
local f = redis.call('HMGET', key, 'state', 'token', 'cancel')
if f[1] ~= 'running' or f[2] ~= ARGV[1] then return -1 end
redis.call('HSET', key, 'lease', now + tonumber(ARGV[2]))
if f[3] == '1' then return 1 end
return 0`;

/**
 * cancel(call; markTtlMs, channelPrefix, callId)
 * → {'marked', lastWorker} not started: whoever takes it answers Cancelled | {'signalled', worker, receivers}
 *   | {'cancelled', worker} already cancelled | {'finished', state} too late.
 */
const cancel = `${now}
local key = KEYS[1]
local f = redis.call('HMGET', key, 'state', 'worker')
local state, worker = f[1], f[2]
if not state then
  redis.call('HSET', key, 'state', 'cancelled', 'cancel', '1', 'finishedAt', now)
  redis.call('PEXPIRE', key, ARGV[1])
  return {'marked', ''}
end
if state == 'queued' then
  redis.call('HSET', key, 'state', 'cancelled', 'cancel', '1', 'finishedAt', now)
  return {'marked', worker or ''}
end
if state == 'running' then
  redis.call('HSET', key, 'cancel', '1')
  local n = redis.call('PUBLISH', ARGV[2] .. (worker or ''), ARGV[3])
  return {'signalled', worker or '', n}
end
if state == 'cancelled' then return {'cancelled', worker or ''} end
return {'finished', state}`;

/** heartbeat(workers, seen; field, entryJson, entryTtlMs, keyTtlMs) → Redis time. Drops the entries of workers that stopped beating. */
const heartbeat = `${now}
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
const goodbye = `redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`;

/** workers(workers, seen) → {redisNow, field1, entry1, expires1, ...} of the live workers only. */
const workers = `${now}
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

export const scripts = {
  // The batched scripts take the number of keys as their first argument.
  inflightClaim: { lua: claim },
  inflightFinish: { lua: finish },
  inflightRecord: { numberOfKeys: 1, lua: record },
  inflightRelease: { numberOfKeys: 1, lua: release },
  inflightRenew: { numberOfKeys: 1, lua: renew },
  inflightCancel: { numberOfKeys: 1, lua: cancel },
  inflightHeartbeat: { numberOfKeys: 2, lua: heartbeat },
  inflightGoodbye: { numberOfKeys: 2, lua: goodbye },
  inflightWorkers: { numberOfKeys: 2, lua: workers },
} as const;

export type ScriptName = keyof typeof scripts;
