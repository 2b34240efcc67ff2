--[[
  One answer to a record the batch's circuit watched (a canary record, or the probe of a held batch).
  Canary: a refusal is kept with its answer (the record waits: `defer`); once more than the refused
  share of the canary has one cause (status + code) the batch is `held` (its index entry names it);
  once no cause can reach that share the batch is `flowing` and the refusals it kept end with their
  answers. Held: the probe accepted resumes the batch (`flowing`, its kept refusals sent again), the
  probe refused keeps it held and doubles the wait to the next probe, up to maxProbeMs.

  Input:
    KEYS[1] circuit
    KEYS[2] granted
    KEYS[3] refused
    KEYS[4] batch
    KEYS[5] heldIndex         held batches, scored by when they were held
    ARGV[1] orderKey
    ARGV[2] kind              accepted | refused | neutral (an end that says nothing of the content)
    ARGV[3] signature         `<status> <code>` of a refusal
    ARGV[4] answer            the refusal's outcome (JSON)
    ARGV[5] canaryOrders
    ARGV[6] refusedPercent
    ARGV[7] probeMs
    ARGV[8] maxProbeMs
    ARGV[9] ttlMs
    ARGV[10] batchId
    ARGV[11] status
    ARGV[12] code
    ARGV[13] message
    ARGV[14] minRefused       fewer refusals of one cause never hold a batch (a batch of a few orders)
  Output:
    {transition, decision}: transition none | held | passed | resumed; decision count | defer
]]
--- @include "redisNow"
--- @include "batchImport"
local now = redisNow()
local state = redis.call('HGET', KEYS[1], 'state')
local key = ARGV[1]
local refused = ARGV[2] == 'refused'
local function keep()
  redis.call('HSET', KEYS[3], key, ARGV[4])
  redis.call('PEXPIRE', KEYS[3], ARGV[9])
end
if state == 'canary' then
  if redis.call('SISMEMBER', KEYS[2], key) == 0 then return {'none', 'count'} end
  if redis.call('HSETNX', KEYS[1], 'd:' .. key, 1) == 0 then
    if refused then keep() return {'none', 'defer'} end
    return {'none', 'count'}
  end
  local done = redis.call('HINCRBY', KEYS[1], 'done', 1)
  local decision = 'count'
  if ARGV[2] == 'accepted' then redis.call('HINCRBY', KEYS[1], 'accepted', 1) end
  if refused then
    keep()
    decision = 'defer'
    local n = redis.call('HINCRBY', KEYS[1], 'r:' .. ARGV[3], 1)
    if n > tonumber(redis.call('HGET', KEYS[1], 'topN') or 0) then
      redis.call('HSET', KEYS[1], 'topN', n, 'signature', ARGV[3], 'status', ARGV[11], 'code', ARGV[12], 'message', ARGV[13], 'sample', ARGV[4])
    end
  end
  local size = canarySize(batchImport(KEYS[4]), tonumber(ARGV[5]))
  local holdAt = math.max(math.floor(size * tonumber(ARGV[6]) / 100) + 1, tonumber(ARGV[14]))
  local topN = tonumber(redis.call('HGET', KEYS[1], 'topN') or 0)
  if topN >= holdAt then
    redis.call('HSET', KEYS[1], 'state', 'held', 'heldAt', now, 'nextProbeAt', now + tonumber(ARGV[7]), 'probes', 0, 'size', size)
    redis.call('ZADD', KEYS[5], now, ARGV[10])
    return {'held', decision}
  end
  if topN + math.max(0, size - done) < holdAt then
    redis.call('HSET', KEYS[1], 'state', 'flowing', 'passedAt', now, 'size', size)
    -- This refusal ends now, as the batch's others do when their records come again.
    if refused then redis.call('HDEL', KEYS[3], key) end
    return {'passed', 'count'}
  end
  return {'none', decision}
end
if state == 'held' then
  local probe = redis.call('HGET', KEYS[1], 'probeKey') == key
  if not probe then
    if refused then keep() return {'none', 'defer'} end
    return {'none', 'count'}
  end
  if ARGV[2] == 'accepted' then
    redis.call('HDEL', KEYS[1], 'probeKey', 'probeUntil')
    redis.call('HSET', KEYS[1], 'state', 'flowing', 'resumedAt', now)
    redis.call('DEL', KEYS[3])
    redis.call('ZREM', KEYS[5], ARGV[10])
    return {'resumed', 'count'}
  end
  if refused then
    keep()
    redis.call('HDEL', KEYS[1], 'probeKey', 'probeUntil')
    local probes = redis.call('HINCRBY', KEYS[1], 'probes', 1)
    local wait = math.floor(math.min(tonumber(ARGV[7]) * 2 ^ probes, tonumber(ARGV[8])))
    redis.call('HSET', KEYS[1], 'nextProbeAt', now + wait, 'lastProbeAt', now, 'lastProbe', ARGV[3])
    return {'none', 'defer'}
  end
  return {'none', 'count'}
end
return {'none', 'count'}
