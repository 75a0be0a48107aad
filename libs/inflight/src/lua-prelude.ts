// Lua shared by the in-flight scripts: the Redis clock, and the record's field helpers.

/** Sets `now` to Redis' clock in ms (TIME): leases are judged on one clock however skewed the workers' are. */
export const now = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Field helpers for the scripts that change a record's middle (the slow paths). */
export const fields = `local S = '\\31'
local function decode(v)
  local f, pos = {}, 1
  for i = 1, 10 do
    local j = string.find(v, S, pos, true)
    if not j then
      f[i] = string.sub(v, pos)
      for k = i + 1, 11 do f[k] = '' end
      return f
    end
    f[i] = string.sub(v, pos, j - 1)
    pos = j + 1
  end
  f[11] = string.sub(v, pos)
  return f
end
local function encode(f) return table.concat(f, S, 1, 11) end
local names = {R = 'running', Q = 'queued', W = 'retrying', D = 'done', F = 'failed', C = 'cancelled', E = 'expired'}`;
