--[[
  The batch's circuit asked before a wave of its records is claimed (src/worker/batchCanary.ts).
  A batch starts in `canary`: its first `canaryOrders` records go, the rest wait for the canary's
  verdict (src/lua/scripts/batchOutcome-5.lua). `flowing` (the canary passed, or a probe was
  accepted) and `released` (a person's release): every record goes, but one the canary refused
  while the batch was judged gets that answer back without a second POST (`answer`). `held`: nothing
  goes but one probe (a record not yet tried) once `nextProbeAt` has come by Redis's clock.
  `cancelled`: every record ends without being sent. A batch smaller than the canary is its own.
  Whatever its state, nothing of a batch goes while its file is still read (importState `importing`
  without `readAt`): an import refuses a file that changes while it is read (FILE_CHANGED_WHILE_READ,
  its batch's failCode), and every record of such a batch ends without being sent, as a cancelled
  one's. Once the read has ended (`readAt`, the file checked unchanged) the batch goes while its import
  still queues the rest, as soon as a whole canary is queued (`enqueued` >= canaryOrders: the canary's
  size is then final; stillRead in src/lua/includes/batchImport.lua). Such a record waits as `read`,
  not `wait`: its worker, once it has put the job back, looks whether that ended meanwhile (the
  import's wake may have come before the job rested) and wakes the job itself.

  Input:
    KEYS[1] circuit           the batch's circuit (a hash)
    KEYS[2] granted           the canary's records (a set)
    KEYS[3] refused           records refused while the batch was judged (a hash key -> answer JSON)
    KEYS[4] batch             the batch record (importState, readAt, enqueued: the batch's size once known)
    ARGV[1] canaryOrders
    ARGV[2] ttlMs             how long the circuit is kept
    ARGV[3] probeTimeoutMs    a probe that never reports is granted again after this
    ARGV[4] canaryWaitMs      how long a record waits for the canary's verdict (or its file's read)
    ARGV[5...] per record: orderKey
  Output:
    {state, waitMs, refusedCount, decision...}: one decision per record, go | probe | wait | read |
    cancel | answer:<JSON of the refusal>
]]
--- @include "redisNow"
--- @include "batchImport"
local now = redisNow()
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  state = 'canary'
  redis.call('HSET', KEYS[1], 'state', 'canary', 'since', now)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
local import = batchImport(KEYS[4])
local size = canarySize(import, tonumber(ARGV[1]))
local reading = stillRead(import, tonumber(ARGV[1]))
local changed = import.failCode == 'FILE_CHANGED_WHILE_READ'
local out = {state, 0, redis.call('HLEN', KEYS[3])}
local waitMs = tonumber(ARGV[4])
if state == 'held' then
  local nextProbeAt = tonumber(redis.call('HGET', KEYS[1], 'nextProbeAt') or now)
  waitMs = math.max(1000, math.min(nextProbeAt - now, 15000))
end
out[2] = waitMs
for i = 5, #ARGV do
  local key = ARGV[i]
  local d = 'wait'
  if state == 'cancelled' or changed then
    d = 'cancel'
  elseif reading then
    d = 'read'
  elseif state == 'flowing' or state == 'released' then
    local answer = redis.call('HGET', KEYS[3], key)
    if answer then d = 'answer:' .. answer else d = 'go' end
  elseif state == 'canary' then
    -- A record the canary refused waits for the verdict: it is never sent twice while judged.
    if redis.call('HEXISTS', KEYS[3], key) == 1 then
      d = 'wait'
    elseif redis.call('SISMEMBER', KEYS[2], key) == 1 then
      d = 'go'
    elseif redis.call('SCARD', KEYS[2]) < size then
      redis.call('SADD', KEYS[2], key)
      redis.call('PEXPIRE', KEYS[2], ARGV[2])
      d = 'go'
    end
  elseif state == 'held' then
    local probeKey = redis.call('HGET', KEYS[1], 'probeKey')
    if probeKey == key then
      d = 'probe'
    elseif redis.call('HEXISTS', KEYS[3], key) == 0 and redis.call('SISMEMBER', KEYS[2], key) == 0 then
      local nextProbeAt = tonumber(redis.call('HGET', KEYS[1], 'nextProbeAt') or now)
      local probeUntil = tonumber(redis.call('HGET', KEYS[1], 'probeUntil') or 0)
      if now >= nextProbeAt and (not probeKey or now >= probeUntil) then
        redis.call('HSET', KEYS[1], 'probeKey', key, 'probeUntil', now + tonumber(ARGV[3]))
        d = 'probe'
      end
    end
  end
  out[#out + 1] = d
end
return out
