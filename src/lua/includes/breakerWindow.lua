--[[
  The circuit breaker's window: windowTotal sums the per-second attempt buckets of the window,
  openWait is the reopen wait (doubling with each opening of an episode, up to maxOpenMs).
]]
local function windowTotal(bucketPrefix, now, windowMs)
  local last = math.floor(now / 1000)
  local first = math.floor((now - windowMs) / 1000) + 1
  local total = 0
  for s = first, last do total = total + tonumber(redis.call('GET', bucketPrefix .. s) or '0') end
  return total
end
local function openWait(openMs, maxOpenMs, openCount)
  return math.min(maxOpenMs, openMs * (2 ^ (openCount - 1)))
end
