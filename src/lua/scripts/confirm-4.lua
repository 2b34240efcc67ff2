--[[
  The job of a reservation is in BullMQ (added by its importer, or by a reconciler): the kept job
  is dropped and the batch counts the order as queued, once.

  Input:
    KEYS[1] ledger
    KEYS[2] batch
    KEYS[3] unqueuedIndex
    KEYS[4] unqueuedJobs
    ARGV[1] batchId
    ARGV[2] orderKey
  Output:
    1 when this call counted it, 0 when it was counted before or another batch owns the key now
]]
--- @include "batchIncr"
local e = redis.call('HMGET', KEYS[1], 'b', 'jc')
if e[1] ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('HDEL', KEYS[4], ARGV[2]) == 0 and redis.call('HDEL', KEYS[1], 'j') == 0 then return 0 end
-- Read with the batch, so an import's confirm (no flag) costs no command for it.
if e[2] then
  redis.call('HDEL', KEYS[1], 'jc')
  return 0
end
batchIncr(KEYS[2], 'enqueued', 1)
return 1
