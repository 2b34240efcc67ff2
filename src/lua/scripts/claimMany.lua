--[[
  Claims the records of a chunk job for one attempt of it, the gate asked once (with askGate).
  Half-open (verdict `trial`), one record is claimed: a trial stays one request, the first record
  admit says may be the trial (a customer the refusals never named); when none is claimed, the
  trial goes back.

  Input (the number of keys first: 2 + records):
    KEYS[1] gate              the breaker's state (or any key of the slot when not asked)
    KEYS[2] sendingIndex      claims not settled yet (a sorted set: order key -> claim time)
    KEYS[3...] ledger         the ledger entry of each record
    ARGV[1] token
    ARGV[2] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[3] retentionMs
    ARGV[4] ambiguousPolicy   hold|resend
    ARGV[5] askGate           0|1
    ARGV[6] chunkId           the job's id ('' for an earlier release's job of one record)
    ARGV[7] ledgerPrefix      `<prefix>:ledger:`: a ledger key is this and the order key
    ARGV[8...] customer       per record, in KEYS order: whom it is for ('' unknown)
  Output:
    {verdict, retryAt, then outcome and value per record}: verdict `wait` (nothing claimed;
    retryAt: when to ask again, ms), `go` or `trial`; outcomes as claimOne's
]]
--- @include "admit"
--- @include "claimOne"
--- @include "redisNow"
local now = redisNow(ARGV[2])
-- As text once (%.17g: as redis.call converts a number), for the commands that write it per record.
local nowText = string.format('%.17g', now)
local verdict, at, eligible = 'go', '0', {any = true}
if ARGV[5] == '1' then
  local customers = {}
  for i = 8, #ARGV do customers[#customers + 1] = ARGV[i] end
  verdict, at, eligible = admit(KEYS[1], now, customers)
  if verdict == 'wait' then return {'wait', tostring(at)} end
end
local replies = {verdict, '0'}
local claimed = 0
local cut = #ARGV[7] + 1
-- Every claim is in the sending index until its settle (a reconciler finds one whose job is gone):
-- all of this script's in one ZADD (score, member pairs), not one per record.
local sending = {}
for i = 3, #KEYS do
  local mayClaim = verdict ~= 'trial' or (claimed == 0 and (eligible.any or eligible[i - 2]))
  local outcome, value = claimOne({
    ledgerKey = KEYS[i], token = ARGV[1], now = nowText, retentionMs = ARGV[3], ambiguousPolicy = ARGV[4],
    chunkId = ARGV[6], mayClaim = mayClaim,
  })
  if outcome == 'claimed' then
    claimed = claimed + 1
    sending[#sending + 1] = nowText
    sending[#sending + 1] = string.sub(KEYS[i], cut)
    -- unpack's stack is bounded: a job holds at most 100 records (BULKORDER_ORDERS_PER_JOB), but stay safe.
    if #sending >= 1000 then redis.call('ZADD', KEYS[2], unpack(sending)); sending = {} end
  end
  replies[#replies + 1] = outcome
  replies[#replies + 1] = value
end
if #sending > 0 then redis.call('ZADD', KEYS[2], unpack(sending)) end
if verdict == 'trial' and claimed == 0 then redis.call('HINCRBY', KEYS[1], 'trialsLeft', 1) end
return replies
