--[[
  admit(stateKey, now, customers) -> verdict (go | trial | wait), value, eligible: the circuit
  breaker's judgement before a job is sent. admit-1 asks it on its own; the ledger's claims ask it in
  their own script (the gate), so a worker that must ask claims and asks in one round trip. Only
  asked while a worker sees the breaker open or half-open: a closed breaker costs a job no Redis command.
  `customers`: whom the job's records are for ('' unknown), one per record. Half-open after a
  refusal's trip, a trial goes to a record of a customer the refusals never named (their answer says
  nothing new); a job of only refused customers waits (value: when to ask again) unless the breaker
  passed `anyTrialAt` (set when it turned half-open), after which any job may be the trial, so a
  queue holding only the refused customers' orders never stalls. `eligible` (on `trial`): per record,
  whether it may be the trial (`eligible.any`: every record may).
]]
local function trialEligible(stateKey, now, customers)
  local any = {any = true}
  if #customers == 0 then return any end
  local h = redis.call('HMGET', stateKey, 'class', 'customers', 'anyTrialAt')
  if h[1] ~= 'refusal' or not h[2] or h[2] == '' or now >= tonumber(h[3] or '0') then return any end
  local refused = {}
  for customer in string.gmatch(h[2], '[^\n]+') do refused[customer] = true end
  local eligible, found = {}, false
  for i, customer in ipairs(customers) do
    eligible[i] = customer == '' or not refused[customer]
    found = found or eligible[i]
  end
  if not found then return nil end
  return eligible
end
local function admit(stateKey, now, customers)
  local state = redis.call('HGET', stateKey, 'state') or 'closed'
  if state == 'closed' then return 'go', '0', {any = true} end
  if state == 'halfOpen' then
    local left = tonumber(redis.call('HGET', stateKey, 'trialsLeft') or '0')
    if left <= 0 then return 'wait', '0', {} end
    local eligible = trialEligible(stateKey, now, customers)
    if eligible == nil then return 'wait', tostring(now + 1000), {} end
    redis.call('HINCRBY', stateKey, 'trialsLeft', -1)
    return 'trial', '0', eligible
  end
  return 'wait', redis.call('HGET', stateKey, 'nextProbeAt') or '0', {}
end
