--[[
  A person forgets parked records for good (`dead-letters purge`, `review purge`, the dashboard): each record
  and its index member go, the ledger entry stays as it is, and the batch the record was parked in stops
  counting it open (dead or held -> resolved) with a `purged` fix in its history (moveParked), as a release or
  resolve does. A record already gone is left alone (counted once, whoever purges it first).

  Input (the number of keys first: 1 + 1 per record):
    KEYS[1] index             the kind's parked index
    KEYS[2...] per record: record
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] prefix            the keyspace's: the fix goes into the batch's history (moveParked)
    ARGV[3] kind              dead | held
    ARGV[4] who               '' when not known
    ARGV[5] note              '' when none
    ARGV[6...] per record: orderKey
  Output:
    how many records existed (and were purged)
]]
--- @include "batchIncr"
--- @include "moveParked"
--- @include "redisNow"
local now = redisNow(ARGV[1])
local kind = ARGV[3]
local purged = 0
for i = 2, #KEYS do
  local orderKey = ARGV[4 + i]
  local json = redis.call('GET', KEYS[i])
  local removed = redis.call('ZREM', KEYS[1], orderKey)
  if json then
    redis.call('DEL', KEYS[i])
    purged = purged + 1
  end
  if json or removed == 1 then
    local origin = parkedBatch(json or '')
    local fix = {key = orderKey, was = kind, how = 'purged', batch = origin, at = tonumber(now)}
    if ARGV[4] ~= '' then fix.by = ARGV[4] end
    if ARGV[5] ~= '' then fix.note = ARGV[5] end
    moveParked({prefix = ARGV[2], batchId = origin, from = kind, to = 'resolved', fix = fix, count = batchIncr})
  end
end
return purged
