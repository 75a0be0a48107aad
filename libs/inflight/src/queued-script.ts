/**
 * unmarkQueued(call) → 1 dropped | 0 kept. A call its caller marked queued (trackQueued) was answered
 * without any tracked worker claiming it (a worker without a tracker answered): the mark would say
 * `queued` until the deadline, so its caller drops it. Only the caller's own mark goes: state Q with
 * no lease, worker or token, attempt 0 and no cancel (fields 1 and 3 to 7, scripts.ts); a claimed,
 * given-back, cancelled or finished record stays as it is.
 */
export const unmarkQueued = `local v = redis.call('GET', KEYS[1])
if v and string.find(v, '^Q\\031%d*\\031\\031\\031\\0310\\031\\031') then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;
