--[[
  Counts successes of the past moments in the current second's bucket of the breaker's window.
  State hash fields of the breaker: src/worker/circuitBreaker.ts.

  Input:
    KEYS[1] state             the breaker's state (routes the call to the window's node; not read)
    ARGV[1] bucketPrefix      the buckets share the state's hash tag
    ARGV[2] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[3] windowMs
    ARGV[4] count
  Output:
    1
]]
--- @include "redisNow"
local now = redisNow(ARGV[2])
local bucket = ARGV[1] .. math.floor(now / 1000)
redis.call('INCRBY', bucket, ARGV[4])
redis.call('PEXPIRE', bucket, tonumber(ARGV[3]) + 2000)
return 1
