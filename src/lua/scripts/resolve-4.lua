--[[
  held -> delivered without sending: a person found the order on the service. Its batch counts it
  delivered, and its history of fixes says who resolved it.

  Input:
    KEYS[1] ledger
    KEYS[2] batch             of the held entry, read before
    KEYS[3] heldRecord
    KEYS[4] heldIndex
    ARGV[1] expectedBatch
    ARGV[2] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[3] retentionMs
    ARGV[4] orderKey
    ARGV[5] remoteId          '' when not given
    ARGV[6] who
    ARGV[7] note
    ARGV[8] prefix            the keyspace's: the fix goes into the batch's history (moveParked)
  Output:
    `resolved`, `moved` (the entry changed batch since it was read: read and try again) or the
    state found (`missing`)
]]
--- @include "decideHeld"
--- @include "redisNow"
local now = redisNow(ARGV[2])
local s = redis.call('HGET', KEYS[1], 's')
if s ~= 'held' and not (not s and redis.call('EXISTS', KEYS[3]) == 1) then return s or 'missing' end
if (redis.call('HGET', KEYS[1], 'b') or '') ~= ARGV[1] then return 'moved' end
redis.call('HSET', KEYS[1], 's', 'delivered', 'u', now, 'd', now, 'rv', 'resolved', 'rw', ARGV[6], 'rt', now)
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'r', ARGV[5]) end
redis.call('HDEL', KEYS[1], 't')
decideHeld({
  ledgerKey = KEYS[1], recordKey = KEYS[3], indexKey = KEYS[4], orderKey = ARGV[4], retentionMs = ARGV[3],
  note = ARGV[7], wasHeld = s == 'held', prefix = ARGV[8], batchId = ARGV[1], to = 'delivered',
  fix = {key = ARGV[4], was = 'held', how = 'resolved', by = ARGV[6], batch = ARGV[1], at = now},
})
return 'resolved'
