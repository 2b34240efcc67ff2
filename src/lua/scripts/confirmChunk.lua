--[[
  A chunk job is in BullMQ (added by its importer or requeue, or by a reconciler): its kept job is
  dropped and the batch counts, once, each of its records still reserved by this batch into this
  chunk, except those reserved `alreadyCounted` (the breaker's burst: their batch counted them
  before), whose mark goes instead. A job of one record an earlier release reserved (its key as
  job id, no chunk number) only while its entry is still this batch's: another batch of that release
  kept its job under the same key; an older entry may keep that job in itself (`j`).

  Input (the number of keys first: 3 + records):
    KEYS[1] batch
    KEYS[2] unqueuedIndex
    KEYS[3] unqueuedJobs
    KEYS[4...] ledger         the ledger entry of each record
    ARGV[1] batchId
    ARGV[2] chunkId           the job's id (an earlier release's job of one: its record's key)
    ARGV[3] chunkNumber       what its records' entries keep as `q` ('' for an earlier release's job of one)
  Output:
    how many this call counted (0 when the chunk was confirmed before)
]]
--- @include "batchIncr"
if ARGV[3] == '' and redis.call('HGET', KEYS[4], 'b') ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('HDEL', KEYS[3], ARGV[2]) == 0 and (ARGV[3] ~= '' or redis.call('HDEL', KEYS[4], 'j') == 0) then return 0 end
local n = 0
for i = 4, #KEYS do
  local e = redis.call('HMGET', KEYS[i], 'b', 'q', 'jc')
  if e[1] == ARGV[1] and (e[2] or '') == ARGV[3] then
    if e[3] then redis.call('HDEL', KEYS[i], 'jc') else n = n + 1 end
  end
end
if n > 0 then batchIncr(KEYS[1], 'enqueued', n) end
return n
