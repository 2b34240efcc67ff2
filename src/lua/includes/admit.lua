--[[
  admit(stateKey) -> verdict (go | trial | wait), nextProbeAt: the circuit breaker's judgement before
  a job is sent. admit-1 asks it on its own; the ledger's claims ask it in their own script (the
  gate), so a worker that must ask claims and asks in one round trip. Only asked while a worker
  sees the breaker open or half-open: a closed breaker costs a job no Redis command.
]]
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
