/**
 * Lua for the circuit breaker: every judgement and transition is one script, so any number of
 * workers on any hosts share one window and one state. Key names derived inside a script (the
 * per-second buckets, a signature's sets) assume a single Redis node, like the rest of bulkorder.
 *
 * State hash fields: state (closed | open | halfOpen), signature, class, reason, counts (JSON:
 * failures by status or `no answer`), customers (refused, newline-separated), status, code,
 * message, since (first opening of this episode), openedAt, nextProbeAt, openCount, trialsLeft,
 * halfOpenAt, alerted (1 once the long-open alert fired), closedAt.
 */

/** Shared helpers: the bucket sum of the window, and the reopen wait. */
const COMMON = `
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
`;

/**
 * Counts successes of the past moments in the current second's bucket.
 * KEYS: none. ARGV: bucketPrefix, now, windowMs, count.
 */
export const RECORD_HEALTHY = `
local bucket = ARGV[1] .. math.floor(tonumber(ARGV[2]) / 1000)
redis.call('INCRBY', bucket, ARGV[4])
redis.call('PEXPIRE', bucket, tonumber(ARGV[3]) + 2000)
return 1
`;

/**
 * One failed attempt. Closed: adds it to the window and opens when the evidence is enough: enough
 * failed attempts of one signature, over enough distinct orders and (refusals) distinct customers,
 * at the class's share of the window. A refusal a healthy trial of another customer proved to be
 * about its customer (the exempt set) is no evidence. Open/half-open: a refusal of the trip's
 * signature joins the burst (requeued at close); a failed trial reopens with a longer wait; a
 * half-open breaker whose trial got an answer of another kind closes (`closeNow`: the API answers
 * again, that refusal is about the order).
 * KEYS: state, failures(signature), orders(signature), burst, customers(signature), exempt.
 * ARGV: now, windowMs, bucketPrefix, attemptId (`<label>|<unique>`: the reason counts labels),
 *       orderKey, signature, minAttempts, minOrders, ratio, openMs, maxOpenMs, class, status,
 *       code, message, healthy (this process's successes not yet counted: they join the window
 *       first, so the ratio is judged on every attempt this process made, not only those its
 *       last tick flushed), customer, minCustomers.
 * Returns {transition, state, failures, total, orders, customers, counts (JSON label -> n)}:
 * transition none | opened | reopened | closeNow; the numbers only when opened.
 */
export const RECORD_FAILURE = COMMON + `
local now = tonumber(ARGV[1])
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
local windowKeys = {KEYS[2], KEYS[3], KEYS[5]}
for i, member in ipairs({ARGV[4], ARGV[5], ARGV[17]}) do
  local key = windowKeys[i]
  redis.call('ZADD', key, now, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  redis.call('PEXPIRE', key, windowMs)
end
local failures = redis.call('ZCARD', KEYS[2])
local orders = redis.call('ZCARD', KEYS[3])
local customers = redis.call('ZCARD', KEYS[5])
local total = math.max(windowTotal(ARGV[3], now, windowMs), failures)
if failures < tonumber(ARGV[7]) or orders < tonumber(ARGV[8]) or customers < tonumber(ARGV[18]) or failures < tonumber(ARGV[9]) * total then return {'none', 'closed'} end
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
  'status', ARGV[13], 'code', ARGV[14], 'message', ARGV[15], 'customers', table.concat(refused, '\\n'),
  'since', now, 'openedAt', now, 'nextProbeAt', now + tonumber(ARGV[10]), 'openCount', 1, 'trialsLeft', 0, 'alerted', 0)
return {'opened', 'open', failures, total, orders, customers, cjson.encode(counts)}
`;

/**
 * Before a job is sent, as a Lua function `admit(stateKey)` -> verdict (go | trial | wait),
 * nextProbeAt: the gate the ledger's claim asks (src/ledger/ledger.ts ClaimGate), so a worker
 * that must ask claims and asks in one script. Only asked while a worker sees the breaker open or
 * half-open: a closed breaker costs a job no Redis command.
 */
export const ADMIT_FUNCTION = `
local function admit(stateKey)
  local state = redis.call('HGET', stateKey, 'state') or 'closed'
  if state == 'closed' then return 'go', '0' end
  if state == 'halfOpen' then
    local left = tonumber(redis.call('HGET', stateKey, 'trialsLeft') or '0')
    if left > 0 then
      redis.call('HINCRBY', stateKey, 'trialsLeft', -1)
      return 'trial', '0'
    end
    return 'wait', '0'
  end
  return 'wait', redis.call('HGET', stateKey, 'nextProbeAt') or '0'
end
`;

/**
 * Before a job is sent, on its own (`CircuitBreaker.admit`). KEYS: state. ARGV: none.
 * Returns {go | trial | wait, nextProbeAt}.
 */
export const ADMIT = ADMIT_FUNCTION + `
local verdict, at = admit(KEYS[1])
return {verdict, at}
`;

/**
 * Closes the breaker: a healthy trial (onlyHalfOpen = 1) or a person's `resume` (0). Clears the
 * trip's evidence. A refusal's trip closed by a trial of a customer it never refused was about its
 * customers: their orders stay dead-lettered and those refusals are no evidence for `exemptMs`
 * (`customers`); otherwise the burst (orders its refusals dead-lettered) is returned to requeue (`api`).
 * KEYS: state, burst, exempt. ARGV: now, onlyHalfOpen, failuresPrefix, ordersPrefix, customersPrefix,
 * trialCustomer ('' when unknown or a person's resume), exemptMs.
 * Returns {closed | none, api | customers, orderKey...}.
 */
export const CLOSE = `
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if state == 'closed' or (ARGV[2] == '1' and state ~= 'halfOpen') then return {'none'} end
local signature = redis.call('HGET', KEYS[1], 'signature') or ''
local refused = redis.call('HGET', KEYS[1], 'customers') or ''
redis.call('DEL', ARGV[3] .. signature, ARGV[4] .. signature, ARGV[5] .. signature)
local about = 'api'
if ARGV[6] ~= '' and refused ~= '' and redis.call('HGET', KEYS[1], 'class') == 'refusal' then
  local seen = false
  for customer in string.gmatch(refused, '[^\\n]+') do
    if customer == ARGV[6] then seen = true end
  end
  if not seen then
    about = 'customers'
    for customer in string.gmatch(refused, '[^\\n]+') do redis.call('SADD', KEYS[3], signature .. '|' .. customer) end
    redis.call('PEXPIRE', KEYS[3], ARGV[7])
  end
end
local burst = about == 'api' and redis.call('SMEMBERS', KEYS[2]) or {}
redis.call('DEL', KEYS[2], KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'closed', 'closedAt', ARGV[1])
local result = {'closed', about}
for _, key in ipairs(burst) do result[#result + 1] = key end
return result
`;

/**
 * What the window holds now, for the breaker's view (read only).
 * KEYS: failures(SERVER_FAILING). ARGV: now, windowMs, bucketPrefix.
 * Returns {total attempts, server-failing attempts, counts (JSON label -> n)}.
 */
export const WINDOW = COMMON + `
local now = tonumber(ARGV[1])
local members = redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[2]), '+inf')
local counts = {}
for _, member in ipairs(members) do
  local label = string.match(member, '^(.-)|') or '?'
  counts[label] = (counts[label] or 0) + 1
end
local total = math.max(windowTotal(ARGV[3], now, tonumber(ARGV[2])), #members)
return {total, #members, cjson.encode(counts)}
`;

/**
 * Run by every worker about once a second: an open breaker whose wait is over turns half-open
 * (unless a person paused the queue), half-open trials that never reported are granted again,
 * and an episode open longer than alertAfterMs is announced once.
 * KEYS: state, pausedBy. ARGV: now, trialCalls, trialTimeoutMs, alertAfterMs.
 * Returns {transition, state}: transition none | halfOpen | stuck.
 */
export const TICK = `
local now = tonumber(ARGV[1])
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
  redis.call('HSET', KEYS[1], 'state', 'halfOpen', 'trialsLeft', ARGV[2], 'halfOpenAt', now)
  return {'halfOpen', 'halfOpen'}
end
local left = tonumber(redis.call('HGET', KEYS[1], 'trialsLeft') or '0')
local at = tonumber(redis.call('HGET', KEYS[1], 'halfOpenAt') or '0')
if left == 0 and now - at >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'trialsLeft', ARGV[2], 'halfOpenAt', now)
end
return {'none', state}
`;
