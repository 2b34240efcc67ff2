--[[
  Run by every worker about once a second: an open breaker whose wait is over turns half-open
  (unless a person paused the queue), half-open trials that never reported are granted again,
  and an episode open longer than alertAfterMs is announced once. Half-open, the trials go first to
  customers the refusals never named (admit), to any job from `anyTrialAt` on.

  Input:
    KEYS[1] state
    KEYS[2] pausedBy          set while a person paused the queue
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] trialCalls
    ARGV[3] trialTimeoutMs
    ARGV[4] alertAfterMs
    ARGV[5] trialFallbackMs   half-open, trials go to customers the refusals never named for this
                              long (anyTrialAt); then to any job
  Output:
    {transition, state}: transition none | halfOpen | stuck
]]
--- @include "redisNow"
local now = redisNow(ARGV[1])
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if state == 'closed' then return {'none', state} end
local since = tonumber(redis.call('HGET', KEYS[1], 'since') or now)
if now - since >= tonumber(ARGV[4]) and redis.call('HGET', KEYS[1], 'alerted') ~= '1' then
  redis.call('HSET', KEYS[1], 'alerted', 1)
  return {'stuck', state}
end
if state == 'open' then
  if redis.call('EXISTS', KEYS[2]) == 1 then return {'none', state} end
  if now < tonumber(redis.call('HGET', KEYS[1], 'nextProbeAt') or '0') then return {'none', state} end
  redis.call('HSET', KEYS[1], 'state', 'halfOpen', 'trialsLeft', ARGV[2], 'halfOpenAt', now,
    'anyTrialAt', now + tonumber(ARGV[5]))
  return {'halfOpen', 'halfOpen'}
end
local left = tonumber(redis.call('HGET', KEYS[1], 'trialsLeft') or '0')
local at = tonumber(redis.call('HGET', KEYS[1], 'halfOpenAt') or '0')
if left == 0 and now - at >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'trialsLeft', ARGV[2], 'halfOpenAt', now)
end
return {'none', state}
