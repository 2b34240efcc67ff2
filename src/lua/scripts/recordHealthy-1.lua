--[[
  Counts successes of the past moments in the current second's bucket of the breaker's window.
  State hash fields of the breaker: src/worker/circuitBreaker.ts.

  Input:
    KEYS[1] state             the breaker's state (routes the call to the window's node; not read)
    ARGV[1] bucketPrefix      the buckets share the state's hash tag
    ARGV[2] now               ms
    ARGV[3] windowMs
    ARGV[4] count
  Output:
    1
]]
local bucket = ARGV[1] .. math.floor(tonumber(ARGV[2]) / 1000)
redis.call('INCRBY', bucket, ARGV[4])
redis.call('PEXPIRE', bucket, tonumber(ARGV[3]) + 2000)
return 1
