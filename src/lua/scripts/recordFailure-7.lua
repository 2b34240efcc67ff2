--[[
  One failed attempt. Closed: adds it to the window and opens when the evidence is enough: enough
  failed attempts of one signature, over enough distinct orders and (refusals) distinct customers
  and batches,
  at the class's share of the window. A refusal a healthy trial of another customer proved to be
  about its customer (the exempt set) is no evidence. Open/half-open: a refusal of the trip's
  signature joins the burst (requeued at close); a failed trial reopens with a longer wait; a
  half-open breaker whose trial got an answer of another kind closes (`closeNow`: the API answers
  again, that refusal is about the order).

  Input:
    KEYS[1] state
    KEYS[2] failures          the signature's failed attempts (sorted set)
    KEYS[3] orders            the signature's orders (sorted set)
    KEYS[4] burst             orders to requeue at close
    KEYS[5] customers         the signature's customers (sorted set)
    KEYS[6] exempt            `<signature>|<customer>` pairs a healthy trial proved to be about the customer
    KEYS[7] batches           the signature's batches (sorted set): a refusal of one batch is its content's
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] windowMs
    ARGV[3] bucketPrefix
    ARGV[4] attemptId         `<label>|<unique>`: the reason counts labels
    ARGV[5] orderKey
    ARGV[6] signature
    ARGV[7] minAttempts
    ARGV[8] minOrders
    ARGV[9] ratio
    ARGV[10] openMs
    ARGV[11] maxOpenMs
    ARGV[12] class            refusal|serverFailing|unreachable|credentials
    ARGV[13] status
    ARGV[14] code
    ARGV[15] message
    ARGV[16] healthy          this process's successes not yet counted: they join the window first,
                              so the ratio is judged on every attempt this process made
    ARGV[17] customer
    ARGV[18] minCustomers
    ARGV[19] batch
    ARGV[20] minBatches
  Output:
    {transition, state, failures, total, orders, customers, counts (JSON label -> n)}:
    transition none | opened | reopened | closeNow; the numbers only when opened
]]
--- @include "breakerWindow"
--- @include "redisNow"
local now = redisNow(ARGV[1])
local windowMs = tonumber(ARGV[2])
local bucket = ARGV[3] .. math.floor(now / 1000)
redis.call('INCRBY', bucket, 1 + tonumber(ARGV[16] or '0'))
redis.call('PEXPIRE', bucket, windowMs + 2000)
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if redis.call('SISMEMBER', KEYS[6], ARGV[6] .. '|' .. ARGV[17]) == 1 then return {'none', state} end
if state ~= 'closed' then
  local tripSignature = redis.call('HGET', KEYS[1], 'signature')
  local sameKind = ARGV[6] == tripSignature or ARGV[12] ~= 'refusal'
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
local windowKeys = {KEYS[2], KEYS[3], KEYS[5], KEYS[7]}
for i, member in ipairs({ARGV[4], ARGV[5], ARGV[17], ARGV[19]}) do
  local key = windowKeys[i]
  redis.call('ZADD', key, now, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  redis.call('PEXPIRE', key, windowMs)
end
local failures = redis.call('ZCARD', KEYS[2])
local orders = redis.call('ZCARD', KEYS[3])
local customers = redis.call('ZCARD', KEYS[5])
local batches = redis.call('ZCARD', KEYS[7])
local total = math.max(windowTotal(ARGV[3], now, windowMs), failures)
if failures < tonumber(ARGV[7]) or orders < tonumber(ARGV[8]) or customers < tonumber(ARGV[18]) or batches < tonumber(ARGV[20]) or failures < tonumber(ARGV[9]) * total then return {'none', 'closed'} end
redis.call('DEL', KEYS[4])
if ARGV[12] == 'refusal' then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do redis.call('SADD', KEYS[4], key) end
end
local counts = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local label = string.match(member, '^(.-)|') or '?'
  counts[label] = (counts[label] or 0) + 1
end
local refused = redis.call('ZRANGE', KEYS[5], 0, 99)
redis.call('HSET', KEYS[1], 'state', 'open', 'signature', ARGV[6], 'class', ARGV[12],
  'status', ARGV[13], 'code', ARGV[14], 'message', ARGV[15], 'customers', table.concat(refused, '\n'),
  'since', now, 'openedAt', now, 'nextProbeAt', now + tonumber(ARGV[10]), 'openCount', 1, 'trialsLeft', 0, 'alerted', 0)
return {'opened', 'open', failures, total, orders, customers, cjson.encode(counts)}
