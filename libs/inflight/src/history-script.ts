import type { HistoryBounds } from './keys';

/**
 * The history half of the finish script (scripts.ts): Lua spliced into it, defining `n` (the calls
 * in the batch), `hist` (whether the two history streams were passed), `remember(i, head, result)`
 * (adds call i's finished record to its stream) and `trim()` (bounds each stream written, by age,
 * and refreshes its TTL). A stream entry is `c` (the call id) and `r` (its finished record, in the
 * record format of record-codec.ts): a success without its result (the record keeps it while it lives),
 * a failure with its error response when that is at most `maxErrorBytes` long.
 *
 * Arguments, after the calls': entries kept of successes, of failures; age kept (ms) of successes, of
 * failures; the longest error response kept. The finish without them (Redis Cluster's one-key form,
 * whose streams live in another slot) records no history.
 */
export const historyLua = `local n = #KEYS
local hist = #ARGV ~= 4 * n
if hist then n = n - 2 end
local added = {false, false}
local function remember(i, head, result)
  local j = string.byte(head, 1) == 68 and 1 or 2
  local h = n * 4
  if j == 2 and #result <= tonumber(ARGV[h + 5]) then head = head .. result end
  redis.call('XADD', KEYS[n + j], 'MAXLEN', '~', ARGV[h + j], '*', 'c', string.match(KEYS[i], '{(.*)}$'), 'r', head)
  added[j] = true
end
local function trim()
  for j = 1, 2 do
    if added[j] then
      local age = tonumber(ARGV[n * 4 + 2 + j])
      redis.call('XTRIM', KEYS[n + j], 'MINID', '~', now - age)
      redis.call('PEXPIRE', KEYS[n + j], age)
    end
  end
end`;

/** The history settings the finish script takes, in its order. */
export function historyArgs(bounds: HistoryBounds): number[] {
  return [bounds.done.entries, bounds.failed.entries, bounds.done.ageMs, bounds.failed.ageMs, maxErrorBytes];
}

/** An error response longer than this (its `data`, mostly) is kept out of the history: the entry keeps the code. */
export const maxErrorBytes = 8192;

/**
 * historyAdd(stream; callId, record, entries kept, age kept ms): one entry added by whoever saw a call end
 * outside a tracked worker's finish (the gateway relaying a call to an untracked service), bounded and
 * with its TTL as the finish script bounds its own.
 */
export const historyAddLua = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'c', ARGV[1], 'r', ARGV[2])
redis.call('XTRIM', KEYS[1], 'MINID', '~', now - tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

/**
 * The history half of the claim script (scripts.ts): a claim that records a call's end itself (dead:
 * every attempt lost its worker, WorkerLost; a takeover too late, expired) adds it to the failures
 * stream, as the finish script adds what it stores. Defines `n` (the calls in the batch) and
 * `failed(key, f)` (f: the record's fields as ended). With the failures stream passed after the calls'
 * keys, its entries kept and age kept (ms) come after the calls' arguments; without (Redis Cluster's
 * one-key form), nothing is added.
 */
export const claimHistoryLua = `local n = #KEYS
local histArgs = nil
if #ARGV ~= 4 + 5 * n then
  n = n - 1
  histArgs = 4 + 5 * n
end
local function failed(key, f)
  if not histArgs then return end
  local stream = KEYS[n + 1]
  redis.call('XADD', stream, 'MAXLEN', '~', ARGV[histArgs + 1], '*', 'c', string.match(key, '{(.*)}$'), 'r', encode(f))
  redis.call('XTRIM', stream, 'MINID', '~', now - tonumber(ARGV[histArgs + 2]))
  redis.call('PEXPIRE', stream, ARGV[histArgs + 2])
end`;
