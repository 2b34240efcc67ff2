--[[
  Closes the breaker: a healthy trial (onlyHalfOpen = 1) or a person's `resume` (0). Clears the
  trip's evidence. A refusal's trip closed by a trial of a customer it never refused was about its
  customers: their orders stay dead-lettered and those refusals are no evidence for `exemptMs`
  (`customers`), and their last answers (from `answers`) go to `refused`, stamped `@closedAt`: the
  orders of those customers queued before are dead-lettered with that answer, not sent. Otherwise
  the burst (orders its refusals dead-lettered) is returned to requeue (`api`).

  Input:
    KEYS[1] state
    KEYS[2] burst
    KEYS[3] exempt
    KEYS[4] answers           customer -> the last refusal's answer (JSON)
    KEYS[5] refused           customer -> answer, `@closedAt`: the customers this close proved refused
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] onlyHalfOpen      0|1
    ARGV[3] failuresPrefix    + the trip's signature (same hash tag as the state)
    ARGV[4] ordersPrefix
    ARGV[5] customersPrefix
    ARGV[6] trialCustomer     '' when unknown or a person's resume
    ARGV[7] exemptMs
  Output:
    {closed | none, api | customers, orderKey...}
]]
--- @include "redisNow"
local now = redisNow(ARGV[1])
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if state == 'closed' or (ARGV[2] == '1' and state ~= 'halfOpen') then return {'none'} end
local signature = redis.call('HGET', KEYS[1], 'signature') or ''
local refused = redis.call('HGET', KEYS[1], 'customers') or ''
redis.call('DEL', ARGV[3] .. signature, ARGV[4] .. signature, ARGV[5] .. signature)
local about = 'api'
if ARGV[6] ~= '' and refused ~= '' and redis.call('HGET', KEYS[1], 'class') == 'refusal' then
  local seen = false
  for customer in string.gmatch(refused, '[^\n]+') do
    if customer == ARGV[6] then seen = true end
  end
  if not seen then
    about = 'customers'
    redis.call('HSET', KEYS[5], '@closedAt', now)
    for customer in string.gmatch(refused, '[^\n]+') do
      redis.call('SADD', KEYS[3], signature .. '|' .. customer)
      local answer = redis.call('HGET', KEYS[4], customer)
      if answer then redis.call('HSET', KEYS[5], customer, answer) end
    end
    redis.call('PEXPIRE', KEYS[3], ARGV[7])
    redis.call('PEXPIRE', KEYS[5], ARGV[7])
  end
end
local burst = about == 'api' and redis.call('SMEMBERS', KEYS[2]) or {}
redis.call('DEL', KEYS[2], KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'closed', 'closedAt', now)
local result = {'closed', about}
for _, key in ipairs(burst) do result[#result + 1] = key end
return result
