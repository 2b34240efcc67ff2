--[[
  decideHeld(d): what release-5 and resolve-4 both do once a person decided on a held order and its entry
  holds its new state: the entry keeps the person's note (or none) and `d.retentionMs` more of life, the
  held record and its place in the held index go, and, when the entry was held (not an entry gone with its
  held record kept: see release-5), the batch it was held in moves it from held to `d.to`, its history of
  fixes saying who did what. `d`, one table with named fields:
    d.ledgerKey          the ledger entry
    d.recordKey          the held record
    d.indexKey           the held index
    d.orderKey           the order's key (its member in the held index)
    d.retentionMs        the entry's life from now
    d.note               the person's note, '' when none
    d.wasHeld            true when the entry's state was `held`
    d.prefix, d.batchId  as moveParked's: the keyspace's prefix, the batch it was held in
    d.to                 the count it joins in that batch (moveParked's p.to)
    d.fix                the fix for the batch's history (moveParked's p.fix); the note is added here
]]
--- @include "batchIncr"
--- @include "moveParked"
local function decideHeld(d)
  if d.note ~= '' then redis.call('HSET', d.ledgerKey, 'rn', d.note) else redis.call('HDEL', d.ledgerKey, 'rn') end
  redis.call('PEXPIRE', d.ledgerKey, d.retentionMs)
  redis.call('DEL', d.recordKey)
  redis.call('ZREM', d.indexKey, d.orderKey)
  if d.wasHeld then
    if d.note ~= '' then d.fix.note = d.note end
    moveParked({prefix = d.prefix, batchId = d.batchId, from = 'held', to = d.to, fix = d.fix, count = batchIncr})
  end
end
