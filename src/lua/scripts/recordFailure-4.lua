--[[
  One failed attempt. Closed: adds it to the window and opens when the evidence is enough.
  Open/half-open: a refusal of the trip's signature joins the burst (requeued at close); a
  failed trial reopens with a longer wait; a half-open breaker whose trial got an answer of
  another kind closes (`closeNow`: the API answers again, that refusal is about the order).

  Input:
    KEYS[1] state
    KEYS[2] failures          the signature's failed attempts (sorted set)
    KEYS[3] orders            the signature's orders (sorted set)
    KEYS[4] burst             orders to requeue at close
    ARGV[1] now               ms
    ARGV[2] windowMs
    ARGV[3] bucketPrefix
    ARGV[4] attemptId
    ARGV[5] orderKey
    ARGV[6] signature
    ARGV[7] minAttempts
    ARGV[8] minOrders
    ARGV[9] ratio
    ARGV[10] openMs
    ARGV[11] maxOpenMs
    ARGV[12] reason           a format string: failures, total, orders
    ARGV[13] class            refusal|unreachable|credentials
    ARGV[14] status
    ARGV[15] code
    ARGV[16] message
    ARGV[17] healthy          this process's successes not yet counted: they join the window first,
                              so the ratio is judged on every attempt this process made
  Output:
    {transition, state}: transition none | opened | reopened | closeNow
]]
--- @include "breakerWindow"
local now = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local bucket = ARGV[3] .. math.floor(now / 1000)
redis.call('INCRBY', bucket, 1 + tonumber(ARGV[17] or '0'))
redis.call('PEXPIRE', bucket, windowMs + 2000)
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if state ~= 'closed' then
  local tripSignature = redis.call('HGET', KEYS[1], 'signature')
  local sameKind = ARGV[6] == tripSignature or ARGV[13] ~= 'refusal'
  if ARGV[6] == tripSignature then redis.call('SADD', KEYS[4], ARGV[5]) end
  if state == 'halfOpen' then
    if not sameKind then return {'closeNow', state} end
    local count = tonumber(redis.call('HINCRBY', KEYS[1], 'openCount', 1))
    local wait = openWait(tonumber(ARGV[10]), tonumber(ARGV[11]), count)
    redis.call('HSET', KEYS[1], 'state', 'open', 'openedAt', now, 'nextProbeAt', now + wait, 'trialsLeft', 0)
    return {'reopened', 'open'}
  end
  return {'none', state}
end
redis.call('ZADD', KEYS[2], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - windowMs)
redis.call('PEXPIRE', KEYS[2], windowMs)
redis.call('ZADD', KEYS[3], now, ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - windowMs)
redis.call('PEXPIRE', KEYS[3], windowMs)
local failures = redis.call('ZCARD', KEYS[2])
local orders = redis.call('ZCARD', KEYS[3])
local total = math.max(windowTotal(ARGV[3], now, windowMs), failures)
if failures < tonumber(ARGV[7]) or orders < tonumber(ARGV[8]) or failures < tonumber(ARGV[9]) * total then return {'none', 'closed'} end
redis.call('DEL', KEYS[4])
if ARGV[13] == 'refusal' then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do redis.call('SADD', KEYS[4], key) end
end
redis.call('HSET', KEYS[1], 'state', 'open', 'signature', ARGV[6], 'class', ARGV[13],
  'reason', string.format(ARGV[12], failures, total, orders), 'status', ARGV[14], 'code', ARGV[15], 'message', ARGV[16],
  'since', now, 'openedAt', now, 'nextProbeAt', now + tonumber(ARGV[10]), 'openCount', 1, 'trialsLeft', 0, 'alerted', 0)
return {'opened', 'open'}
