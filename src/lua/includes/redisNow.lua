--[[
  redisNow(given) -> the time in ms: Redis's clock (TIME) when `given` is '' (every caller of
  bulkorder), `given` itself otherwise (the script tests pin a time). Every time more than one
  process compares (breaker windows and trial times, claim staleness, rate slots, reservations)
  is Redis's, never a host's, whose clock may be minutes off its peers'. Redis 5+ replicates a
  script's effects, not the script, so reading TIME before writing is allowed.
]]
local function redisNow(given)
  if given and given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
