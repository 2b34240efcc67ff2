--[[
  Claims the records of a chunk job for one attempt of it, the gate asked once (with askGate).
  Half-open (verdict `trial`), one record is claimed: a trial stays one request, the first record
  admit says may be the trial (a customer the refusals never named); when none is claimed, the
  trial goes back.

  Input (the number of keys first: 1 + records):
    KEYS[1] gate              the breaker's state (or any key of the slot when not asked)
    KEYS[2...] ledger         the ledger entry of each record
    ARGV[1] token
    ARGV[2] now               ms
    ARGV[3] retentionMs
    ARGV[4] ambiguousPolicy   hold|resend
    ARGV[5] askGate           0|1
    ARGV[6] chunkId
    ARGV[7...] customer       per record, in KEYS order: whom it is for ('' unknown)
  Output:
    {verdict, retryAt, then outcome and value per record}: verdict `wait` (nothing claimed;
    retryAt: when to ask again, ms), `go` or `trial`; outcomes as claimOne's
]]
--- @include "admit"
--- @include "claimOne"
local verdict, at, eligible = 'go', '0', {any = true}
if ARGV[5] == '1' then
  local customers = {}
  for i = 7, #ARGV do customers[#customers + 1] = ARGV[i] end
  verdict, at, eligible = admit(KEYS[1], tonumber(ARGV[2]), customers)
  if verdict == 'wait' then return {'wait', tostring(at)} end
end
local replies = {verdict, '0'}
local claimed = 0
for i = 2, #KEYS do
  local mayClaim = verdict ~= 'trial' or (claimed == 0 and (eligible.any or eligible[i - 1]))
  local outcome, value = claimOne(KEYS[i], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6], true, mayClaim)
  if outcome == 'claimed' then claimed = claimed + 1 end
  replies[#replies + 1] = outcome
  replies[#replies + 1] = value
end
if verdict == 'trial' and claimed == 0 then redis.call('HINCRBY', KEYS[1], 'trialsLeft', 1) end
return replies
