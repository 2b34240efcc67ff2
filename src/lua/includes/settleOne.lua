--[[
  settleOne(p): records how one attempt ended. Returns ok | lost (another attempt owns the order now)
  | already (delivered before). `p`, one table built once per record by the caller (named fields: a
  swapped pair of keys cannot pass silently); the scripts' own ARGV names where a field is one:
    p.ledgerKey          the order's ledger entry
    p.batchKey           its batch's record (the counts)
    p.deadKey            its dead letter record
    p.deadIndex          the dead letters' index (sorted set: order key -> parked time)
    p.heldKey            its held record
    p.heldIndex          the held orders' index
    p.token              the claim token of the attempt that ends
    p.newState           delivered | queued | dead | held
    p.now                ms (Redis's, redisNow), as text (what redis.call makes of the number: no command
                         converts it again)
    p.retentionMs        the ledger entry's retention
    p.orderKey
    p.remoteId           encodeRemoteId ('' when not delivered)
    p.httpStatus         '' when no answer
    p.code               '' when none (then message is not written)
    p.message
    p.parkedRecord       JSON of the dead or held record
    p.parkedRetentionMs
    p.answered5xx        '1' when this attempt's answer was 5xx
    p.count              function(key, field, by): adds to a batch counter (batchIncr at once, or
                         settleMany's gather: added once per batch and field)
    p.prefix             the keyspace's: `duplicates`, `supersedes` and earlier batches' keys
    p.unsend             function(orderKey): the claim leaves the sending index (claimOne's): ZREM at once, or
                         settleMany's: one ZREM of all its records at its end
    p.replaced           function(orderKey): the dead letter an import linked orderKey to (`<prefix>:supersedes`),
                         nil when none, taken (each link given once): HGET, or settleMany's one HMGET of all its records
  A parked record holds personal data, so it expires after parkedRetentionMs (PX); its index
  member is pruned by the readers (src/deadLetter/pruneParked.ts). A record never exists without
  its index member (both are written and removed together), so ZREM alone tells whether one is left.
  A delivery after an attempt answered 5xx counts in the batch's `possibleDuplicates`, and is indexed for
  `review duplicates` (built from `prefix`: `<prefix>:duplicates`, a sorted set of order keys scored by
  delivery time, and `<prefix>:duplicate-info`, a hash order key -> JSON {batch, at, status, code, message}:
  the last failed attempt's answer, the doubt's cause; src/batches/possibleDuplicates.ts reads and acknowledges them).
  A fix closes what it fixed (moveParked, `prefix` the keyspace's): an order delivered whose dead letter
  was parked in an earlier batch (`dead-letters retry`, a fixed row with the same key) is counted
  `resolved` there; one that ends dead or held again passes its earlier dead letter on (`movedOn`: the
  new batch counts it now); an order delivered that an import linked to the dead letter it replaces
  (`<prefix>:supersedes`, new key -> old key) closes that dead letter as superseded. Each is written
  into the earlier batch's history of fixes.
]]
--- @include "moveParked"
-- The dead letter an import linked `p.orderKey` to (a fixed row of it: `<prefix>:supersedes`) is closed once
-- the fixed order ends: `resolved` as superseded when it is delivered, `movedOn` when it is parked in turn
-- (one open problem, not two). `p`: settleOne's; `batchOf()`: the batch the order ends in.
local function closeReplaced(p, into, how, batchOf)
  local prefix, orderKey = p.prefix, p.orderKey
  local old = p.replaced(orderKey)
  if not old then return end
  redis.call('HDEL', prefix .. ':supersedes', orderKey)
  local oldKey = prefix .. ':dead:' .. old
  if redis.call('ZREM', p.deadIndex, old) == 0 then return end
  local origin = parkedBatch(redis.call('GET', oldKey) or '')
  redis.call('DEL', oldKey)
  moveParked({prefix = prefix, batchId = origin, from = 'dead', to = into, count = p.count,
    fix = {key = old, was = 'dead', how = how, batch = batchOf(), by = orderKey, at = tonumber(p.now)}})
  local oldLedger = prefix .. ':ledger:' .. old
  if redis.call('EXISTS', oldLedger) == 1 then redis.call('HSET', oldLedger, 'sp', orderKey) end
end

local function settleOne(p)
  -- Read once into locals: each is used several times on the hot path.
  local ledgerKey, batchKey, orderKey, now, count = p.ledgerKey, p.batchKey, p.orderKey, p.now, p.count
  local newState, prefix, deadKey, deadIndex = p.newState, p.prefix, p.deadKey, p.deadIndex
  local e = redis.call('HMGET', ledgerKey, 's', 't', 'x', 'c')
  local s = e[1]
  local t = e[2]
  -- The entry's batch only where a rare path needs it (no write here changes `b`): one field less to read per record.
  local b
  local function batchOf()
    if b == nil then b = redis.call('HGET', ledgerKey, 'b') or '' end
    return b
  end
  -- Out of the sending index (claimOne), whatever the outcome: a settle that finds it sending ends its claim or another's.
  if s == 'sending' then p.unsend(orderKey) end
  if newState == 'delivered' then
    -- The API's answer is the truth, even if another worker meanwhile held this order
    -- because our claim looked stale: undo that hold.
    if s == 'delivered' then return 'already' end
    if s == 'held' then
      count(batchKey, 'held', -1)
      redis.call('DEL', p.heldKey)
      redis.call('ZREM', p.heldIndex, orderKey)
    end
    -- After a 5xx (`x`), that answer's status and message (the doubt's cause), read before the writes below
    -- replace them; only then, as they are needed only then.
    local doubt
    if tonumber(e[3] or '0') > 0 then doubt = redis.call('HMGET', ledgerKey, 'h', 'm') end
    -- The claim token is emptied, not deleted (readers take '' for none): one command less.
    redis.call('HSET', ledgerKey, 's', 'delivered', 'u', now, 'd', now, 'r', p.remoteId, 'h', p.httpStatus, 't', '')
    if e[4] then redis.call('HDEL', ledgerKey, 'c', 'm') end
    redis.call('PEXPIRE', ledgerKey, p.retentionMs)
    if redis.call('ZREM', deadIndex, orderKey) == 1 then
      local origin = parkedBatch(redis.call('GET', deadKey) or '')
      redis.call('DEL', deadKey)
      -- The same batch: the breaker's burst, which stopped counting it dead when it requeued it.
      if origin ~= batchOf() then
        moveParked({prefix = prefix, batchId = origin, from = 'dead', to = 'resolved', count = count,
          fix = {key = orderKey, was = 'dead', how = 'delivered', batch = batchOf(), at = tonumber(now)}})
      end
    end
    closeReplaced(p, 'resolved', 'superseded', batchOf)
    count(batchKey, 'delivered', 1)
    if doubt then
      count(batchKey, 'possibleDuplicates', 1)
      redis.call('ZADD', prefix .. ':duplicates', now, orderKey)
      -- Written in a fixed order (a Lua table has none): batch, at, then status, code, message when known.
      local info = '{"batch":' .. cjson.encode(batchOf()) .. ',"at":' .. tostring(tonumber(now))
      if doubt[1] and tonumber(doubt[1]) then info = info .. ',"status":' .. tostring(tonumber(doubt[1])) end
      if e[4] then info = info .. ',"code":' .. cjson.encode(e[4]) end
      if doubt[2] and doubt[2] ~= '' then info = info .. ',"message":' .. cjson.encode(doubt[2]) end
      redis.call('HSET', prefix .. ':duplicate-info', orderKey, info .. '}')
    end
    return 'ok'
  end
  if s ~= 'sending' or t ~= p.token then return 'lost' end
  local fields = {'s', newState, 'u', now}
  if p.httpStatus ~= '' then fields[#fields + 1] = 'h'; fields[#fields + 1] = p.httpStatus end
  if p.code ~= '' then
    fields[#fields + 1] = 'c'; fields[#fields + 1] = p.code
    fields[#fields + 1] = 'm'; fields[#fields + 1] = p.message
  end
  redis.call('HSET', ledgerKey, unpack(fields))
  if p.answered5xx == '1' then redis.call('HINCRBY', ledgerKey, 'x', 1) end
  if newState == 'held' then
    -- A held order may exist on the service: the entry must outlive any retention until a
    -- person releases or resolves it (those set the retention again). It holds no personal data,
    -- so it stays after the held record expires, and still blocks a blind re-send.
    redis.call('PERSIST', ledgerKey)
  else
    redis.call('PEXPIRE', ledgerKey, p.retentionMs)
  end
  if newState == 'queued' then return 'ok' end
  redis.call('HDEL', ledgerKey, 't')
  -- A dead letter of an earlier batch sent again and parked again: this batch counts it now.
  local earlier = redis.call('GET', deadKey)
  if earlier then
    local origin = parkedBatch(earlier)
    if origin ~= batchOf() then
      moveParked({prefix = prefix, batchId = origin, from = 'dead', to = 'movedOn', count = count,
        fix = {key = orderKey, was = 'dead', how = newState, batch = batchOf(), at = tonumber(now)}})
      if newState == 'held' then
        redis.call('DEL', deadKey)
        redis.call('ZREM', deadIndex, orderKey)
      end
    end
  end
  closeReplaced(p, 'movedOn', newState, batchOf)
  if newState == 'dead' then
    redis.call('SET', deadKey, p.parkedRecord, 'PX', p.parkedRetentionMs)
    redis.call('ZADD', deadIndex, now, orderKey)
    count(batchKey, 'dead', 1)
  elseif newState == 'held' then
    redis.call('SET', p.heldKey, p.parkedRecord, 'PX', p.parkedRetentionMs)
    redis.call('ZADD', p.heldIndex, now, orderKey)
    count(batchKey, 'held', 1)
  end
  return 'ok'
end
