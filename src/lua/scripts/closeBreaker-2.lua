--[[
  Closes the breaker: a healthy trial (onlyHalfOpen = 1) or a person's `resume` (0). Clears the
  trip's evidence and returns the burst (orders its refusals dead-lettered) to requeue.

  Input:
    KEYS[1] state
    KEYS[2] burst
    ARGV[1] now               ms
    ARGV[2] onlyHalfOpen      0|1
    ARGV[3] failuresPrefix    + the trip's signature: its failures (same hash tag as the state)
    ARGV[4] ordersPrefix      + the trip's signature: its orders
  Output:
    {closed | none, orderKey...}
]]
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if state == 'closed' or (ARGV[2] == '1' and state ~= 'halfOpen') then return {'none'} end
local signature = redis.call('HGET', KEYS[1], 'signature') or ''
redis.call('DEL', ARGV[3] .. signature, ARGV[4] .. signature)
local burst = redis.call('SMEMBERS', KEYS[2])
redis.call('DEL', KEYS[2], KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'closed', 'closedAt', ARGV[1])
local result = {'closed'}
for _, key in ipairs(burst) do result[#result + 1] = key end
return result
