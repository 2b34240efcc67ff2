--[[
  Claims an order for one attempt. With askGate, the circuit breaker's admit is asked first in the
  same script (a worker that must ask pays one round trip, not two).

  Input:
    KEYS[1] ledger
    KEYS[2] gate              the breaker's state (without a gate, the ledger entry again, never read)
    ARGV[1] token             the claim token of this attempt
    ARGV[2] now               ms
    ARGV[3] retentionMs
    ARGV[4] ambiguousPolicy   hold|resend
    ARGV[5] askGate           0|1
    ARGV[6] jobId             '' for a job of its own
    ARGV[7] customer          whom the order is for ('' unknown): half-open, a trial goes to a customer
                              the refusals never named first (admit)
  Output:
    {outcome, value, verdict}: `wait` (the gate refused; value: when to ask again, ms), or
    claimOne's outcome and value; verdict is the gate's (`go` when not asked)
]]
--- @include "admit"
--- @include "claimOne"
local verdict = 'go'
if ARGV[5] == '1' then
  local at
  verdict, at = admit(KEYS[2], tonumber(ARGV[2]), {ARGV[7] or ''})
  if verdict == 'wait' then return {'wait', tostring(at), verdict} end
end
local outcome, value = claimOne(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6] or '', false, true)
-- A trial that claimed nothing (the order was delivered, held...) goes back for another job.
if verdict == 'trial' and outcome ~= 'claimed' then redis.call('HINCRBY', KEYS[2], 'trialsLeft', 1) end
return {outcome, value, verdict}
