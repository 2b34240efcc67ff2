--[[
  settleOne: records how one attempt ended. `count(key, field, by)` adds to a batch counter (at
  once, or gathered by settleMany and added once per batch and field).
  A parked record holds personal data, so it expires after parkedRetentionMs (PX); its index
  member is pruned by the readers (src/deadLetter/pruneParked.ts). A record never exists without
  its index member (both are written and removed together), so ZREM alone tells whether one is left.
  Returns ok | lost (another attempt owns the order now) | already (delivered before).
  A delivery after an attempt answered 5xx counts in the batch's `possibleDuplicates`.
]]
local function settleOne(ledgerKey, batchKey, deadKey, deadIndex, heldKey, heldIndex, token, target, now, retention, orderKey, remoteId, status, code, message, parked, parkedRetention, answered5xx, count)
  local e = redis.call('HMGET', ledgerKey, 's', 't', 'x', 'c')
  local s = e[1]
  local t = e[2]
  if target == 'delivered' then
    -- The API's answer is the truth, even if another worker meanwhile held this order
    -- because our claim looked stale: undo that hold.
    if s == 'delivered' then return 'already' end
    if s == 'held' then
      count(batchKey, 'held', -1)
      redis.call('DEL', heldKey)
      redis.call('ZREM', heldIndex, orderKey)
    end
    -- The claim token is emptied, not deleted (readers take '' for none): one command less.
    redis.call('HSET', ledgerKey, 's', 'delivered', 'u', now, 'd', now, 'r', remoteId, 'h', status, 't', '')
    if e[4] then redis.call('HDEL', ledgerKey, 'c', 'm') end
    redis.call('PEXPIRE', ledgerKey, retention)
    if redis.call('ZREM', deadIndex, orderKey) == 1 then redis.call('DEL', deadKey) end
    count(batchKey, 'delivered', 1)
    if tonumber(e[3] or '0') > 0 then count(batchKey, 'possibleDuplicates', 1) end
    return 'ok'
  end
  if s ~= 'sending' or t ~= token then return 'lost' end
  local fields = {'s', target, 'u', now}
  if status ~= '' then fields[#fields + 1] = 'h'; fields[#fields + 1] = status end
  if code ~= '' then
    fields[#fields + 1] = 'c'; fields[#fields + 1] = code
    fields[#fields + 1] = 'm'; fields[#fields + 1] = message
  end
  redis.call('HSET', ledgerKey, unpack(fields))
  if answered5xx == '1' then redis.call('HINCRBY', ledgerKey, 'x', 1) end
  if target == 'held' then
    -- A held order may exist on the service: the entry must outlive any retention until a
    -- person releases or resolves it (those set the retention again). It holds no personal data,
    -- so it stays after the held record expires, and still blocks a blind re-send.
    redis.call('PERSIST', ledgerKey)
  else
    redis.call('PEXPIRE', ledgerKey, retention)
  end
  if target == 'queued' then return 'ok' end
  redis.call('HDEL', ledgerKey, 't')
  if target == 'dead' then
    redis.call('SET', deadKey, parked, 'PX', parkedRetention)
    redis.call('ZADD', deadIndex, now, orderKey)
    count(batchKey, 'dead', 1)
  elseif target == 'held' then
    redis.call('SET', heldKey, parked, 'PX', parkedRetention)
    redis.call('ZADD', heldIndex, now, orderKey)
    count(batchKey, 'held', 1)
  end
  return 'ok'
end
