--[[
  Sets BullMQ's manual rate limit (the limiter key holding `value` for `ms`), unless a manual limit
  that lasts at least as long is already set. One script: two 429s answered together used to read
  the limit, then write it, so the shorter Retry-After could land last and cut the longer pause short.

  Input:
    KEYS[1] limiter           the queue's BullMQ limiter key
    ARGV[1] ms
    ARGV[2] value             the manual limit's marker
  Output:
    the pause now left, ms
]]
local ms = tonumber(ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[2] then
  local left = redis.call('PTTL', KEYS[1])
  if left >= ms then return left end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ms)
return ms
