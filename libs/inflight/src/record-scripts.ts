// The scripts that change one call's record (record-codec.ts format): the hot claim and finish
// (batched), and record, release, retrying, renew and progress. Registered in scripts.ts.
import { claimHistoryLua, historyLua } from './history-script';
import { attemptsKeyLua, progressLogEntries } from './keys';
import { lateTakeoverCode, takeoverRuleLua } from './takeover';
import { fields, now } from './lua-prelude';

/**
 * claim(call1..callN[, history failed]; worker, leaseMs, maxAttempts, workerLostCode,
 *   then per call: owner (worker, token, attempt, cancel, meta: fields 4 to 8, joined), runningTtlMs, finishedTtlMs,
 *   mode ('1': a takeover, this claim runs alone in the worker's suspect lane; 'r': the handler runs
 *   already, a first delivery started once its claim was written; 'l': too little time is left before
 *   the deadline for a takeover to start; '0': none of these),
 *   retry ('' or "deadline wait1 wait2 ...": the method's retry policy, the wait after each failed attempt))
 * → 0: every call claimed fresh (the common case, kept small)
 *   | one reply per call: 0 (claimed fresh) | {'run', attempt, previousOwner}
 *   | {'stored', result, code, state, meta} | {'busy', owner, leaseLeftMs} | {'cancelled'} | {'dead', attempts, lastOwner}
 *   | {'expired', lastOwner, attempts} | {'retry', nextAttempt, delayMs, nextTryAt, lastOwner}
 *
 * Takes a batch of calls (the claims one worker makes within one tick) so a
 * busy worker sends one command for many calls. A call nobody has seen costs
 * one `SET NX PX` and no read.
 *
 * Attempts count the runs that started on a worker that then died (or gave the
 * call back). A call whose owner's lease ran out is a suspect: it may be what
 * killed that worker. Any claim takes it over, at attempt + 1, in the crowd,
 * the first time (takeover.ts); its second takeover, or one at its last
 * allowed attempt, only a claim made in isolation (mode '1') makes: any other
 * claim gets `expired` and changes nothing, so a call is never dead-lettered
 * for a crash it only stood beside. A takeover with too little time left
 * (mode 'l') is not made: the call is recorded expired (DeadlineExceeded).
 * A call given back (queued again by a graceful shutdown) is no suspect: any
 * claim takes it, with no previous owner.
 *
 * A suspect whose method has a retry policy (`retry`) is not taken over at once
 * but sent to wait (`retry`): the record goes to W with the wait's end in the
 * lease field and the token `lost` (it is still a suspect), its attempt kept,
 * and the worker publishes the request to the delay queue for that wait. When
 * it comes back, it is taken over alone like any suspect. No wait that would
 * end past the deadline: then it is taken over at once, as without a policy.
 *
 * A claim whose handler runs already (mode 'r') that finds a cancel mark
 * answers `cancelled` too, but writes its running record with the mark kept:
 * the worker aborts the handler, and its finish stores what the run came to.
 */
export const claim = `${now}
${fields}
local leaseMs, maxAttempts, lostCode = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
${takeoverRuleLua}
local head = 'R' .. S .. now .. S .. (now + leaseMs) .. S
${claimHistoryLua}
${attemptsKeyLua}
-- An attempt a new one replaces (f: its record's fields) goes on the call's attempts list, with how it ended.
local function past(key, f, outcome, ttl)
  local list = attemptsKey(key)
  local function int(v) if v == '' then return '0' end return v end
  redis.call('RPUSH', list, '{"attempt":' .. int(f[6]) .. ',"worker":' .. cjson.encode(f[4]) .. ',"startedAt":' .. int(f[2]) .. ',"endedAt":' .. now .. ',"outcome":"' .. outcome .. '"}')
  redis.call('PEXPIRE', list, ttl)
end
-- The wait before attempt failed + 1 under a retry spec ("deadline wait1 wait2 ..."), if it ends before the deadline.
local function retryWait(spec, failed)
  if spec == nil or spec == '' then return nil end
  local i, deadline, wait = 0, nil, nil
  for n in string.gmatch(spec, '%d+') do
    if i == 0 then deadline = tonumber(n) elseif i == failed then wait = tonumber(n) end
    i = i + 1
  end
  if wait and now + wait < deadline then return wait end
  return nil
end
local function existing(key, fresh, runningTtl, finishedTtl, mode, retry)
  local f = decode(redis.call('GET', key))
  local state = f[1]
  if f[11] ~= '' or state == 'D' or state == 'F' or state == 'E' then
    return {'stored', f[11], f[9], names[state] or state, f[8]}
  end
  local mine = decode(fresh)
  -- Cancelled before it was claimed, and its handler started already: the run is recorded, marked cancelled.
  local function runsCancelled()
    mine[6], mine[7] = (tonumber(f[6]) or 0) + 1, '1'
    redis.call('SET', key, encode(mine), 'PX', runningTtl)
    return {'cancelled'}
  end
  if state == 'C' then
    if mode == 'r' then return runsCancelled() end
    f[8] = mine[8]
    redis.call('SET', key, encode(f), 'PX', finishedTtl)
    return {'cancelled'}
  end
  local lease = tonumber(f[3])
  if state == 'R' and lease and lease > now then
    return {'busy', f[4], lease - now}
  end
  -- Waited out a delay after its worker was lost: still a suspect.
  local lost = state == 'W' and f[5] == 'lost'
  f[3], f[5], f[10] = '', '', now
  if f[7] == '1' then
    if mode == 'r' then return runsCancelled() end
    f[1] = 'C'
    redis.call('SET', key, encode(f), 'PX', finishedTtl)
    return {'cancelled'}
  end
  local next = (tonumber(f[6]) or 0) + 1
  if next > maxAttempts then
    f[1], f[9] = 'F', lostCode
    redis.call('SET', key, encode(f), 'PX', finishedTtl)
    failed(key, f)
    return {'dead', next - 1, f[4]}
  end
  -- Queued, or a retry's next attempt: nobody died.
  if state ~= 'R' and not lost then
    if (tonumber(f[6]) or 0) > 0 and f[4] ~= '' then past(key, f, state == 'W' and 'retried' or 'released', finishedTtl) end
    mine[6] = next
    redis.call('SET', key, encode(mine), 'PX', runningTtl)
    return {'run', next, ''}
  end
  if mode == 'l' then
    f[1], f[9] = 'E', '${lateTakeoverCode}'
    redis.call('SET', key, encode(f), 'PX', finishedTtl)
    failed(key, f)
    return {'stored', '', f[9], 'expired', f[8]}
  end
  if state == 'R' then
    local wait = retryWait(retry, next - 1)
    if wait then
      past(key, f, 'lost', finishedTtl)
      f[1], f[3], f[5], f[10] = 'W', now + wait, 'lost', ''
      redis.call('SET', key, encode(f), 'KEEPTTL')
      return {'retry', next, wait, now + wait, f[4]}
    end
  end
  if mode ~= '1' and takeoverAlone(next) then return {'expired', f[4], next - 1} end
  -- Taken over: from a worker lost now (one lost before a retry wait is on the list already).
  if state == 'R' then past(key, f, 'lost', finishedTtl) end
  mine[6] = next
  redis.call('SET', key, encode(mine), 'PX', runningTtl)
  return {'run', next, f[4]}
end
local out, fresh = {}, true
for i = 1, n do
  local a = 4 + (i - 1) * 5
  local record = head .. ARGV[a + 1] .. S .. S .. S
  if redis.call('SET', KEYS[i], record, 'NX', 'PX', ARGV[a + 2]) then
    out[i] = 0
  else
    out[i] = existing(KEYS[i], record, ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])
    fresh = false
  end
end
if fresh then return 0 end
return out`;

/**
 * finish(call1..callN[, history done, history failed]; per call: state letter, result, finishedTtlMs, code[,
 *   then the history settings, see history-script.ts])
 * → one character per call: '1' stored | '0' an outcome was already there.
 * With the two history streams, each outcome stored is added to one of them in the same script: the
 * finish that stores a call's outcome is the one place that knows it is the first, so every tracked
 * call lands in the history exactly once, whichever worker ran it, at no extra round trip.
 * The first outcome wins: a worker whose call was taken over, or that ran it
 * untracked, still stores its result if nobody did yet; nobody overwrites
 * one. The live record's fields are kept; lease and token stay behind, and
 * the state says they no longer count. Batched like {@link claim}.
 */
export const finish = `${now}
local S = '\\31'
local out = {}
${historyLua}
for i = 1, n do
  local a = (i - 1) * 4
  local key = KEYS[i]
  local v = redis.call('GET', key)
  local b = v and string.byte(v, 1)
  local head
  if b == 82 or b == 81 or b == 87 then
    head = ARGV[a + 1] .. string.sub(v, 2, -3) .. ARGV[a + 4] .. S .. now .. S
  elseif not v then
    head = ARGV[a + 1] .. S .. S .. S .. S .. S .. S .. S .. S .. ARGV[a + 4] .. S .. now .. S
  end
  if head then
    redis.call('SET', key, head .. ARGV[a + 2], 'PX', ARGV[a + 3])
    if hist then remember(i, head, ARGV[a + 2]) end
    out[i] = '1'
  else
    out[i] = '0'
  end
end
if hist then trim() end
return table.concat(out)`;

/**
 * record(call; state letter, result, finishedTtlMs, code, worker, meta)
 * → 1 stored | 0 an outcome was already there. The outcome of a call that ran
 * unclaimed (Redis was down when it started), with what the call was, so a
 * redelivery or a caller that lost its reply still finds it.
 */
export const record = `${now}
${fields}
local key = KEYS[1]
local v = redis.call('GET', key)
local f
if v then
  f = decode(v)
  if f[1] ~= 'R' and f[1] ~= 'Q' and f[1] ~= 'W' then return 0 end
else
  f = decode('')
  f[4], f[8] = ARGV[5], ARGV[6]
end
f[1], f[9], f[10], f[11] = ARGV[1], ARGV[4], now, ARGV[2]
redis.call('SET', key, encode(f), 'PX', ARGV[3])
return 1`;

/** release(call; token) → 1 if the unfinished call went back to queued (its lease dropped, so the next delivery need not wait). */
export const release = `${fields}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local f = decode(v)
if f[1] ~= 'R' or f[5] ~= ARGV[1] then return 0 end
f[1], f[3], f[5] = 'Q', '', ''
redis.call('SET', KEYS[1], encode(f), 'KEEPTTL')
return 1`;

/**
 * retrying(call, progress; token, nextTryAt) → 1 | 0 not ours. The attempt failed and the request
 * waits in a delay queue: the record goes to W (retrying) with `nextTryAt` in the lease field, its
 * claim dropped and its attempt kept, so the next delivery claims it as attempt + 1 (like a queued
 * one); the attempt's progress goes with it.
 */
export const retrying = `${fields}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local f = decode(v)
if f[1] ~= 'R' or f[5] ~= ARGV[1] then return 0 end
f[1], f[3], f[5] = 'W', ARGV[2], ''
redis.call('SET', KEYS[1], encode(f), 'KEEPTTL')
redis.call('DEL', KEYS[2])
return 1`;

/** renew(call; token, leaseMs) → 0 renewed | 1 renewed, and a cancel was asked | -1 no longer ours. */
export const renew = `${now}
${fields}
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
local f = decode(v)
if f[1] ~= 'R' or f[5] ~= ARGV[1] then return -1 end
f[3] = now + tonumber(ARGV[2])
redis.call('SET', KEYS[1], encode(f), 'KEEPTTL')
if f[7] == '1' then return 1 end
return 0`;

/**
 * progress(record, progress, progressLog; token, json) → 1 stored | 0 not the owner's running call any more.
 * Only the worker holding the claim writes (a worker whose call was taken over does not). The latest
 * progress lives no longer than the record has left (never under 1 s); the log keeps the last
 * `progressLogEntries` of every attempt, as long as a finished record would (the claim's finishedTtlMs, ARGV[3]).
 */
export const progress = `${fields}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local f = decode(v)
if f[1] ~= 'R' or f[5] ~= ARGV[1] then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1000 then ttl = 1000 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
if redis.call('RPUSH', KEYS[3], ARGV[2]) > ${progressLogEntries} then redis.call('LTRIM', KEYS[3], -${progressLogEntries}, -1) end
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return 1`;
