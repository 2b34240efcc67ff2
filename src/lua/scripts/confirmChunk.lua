--[[
  A chunk job is in BullMQ: its kept job is dropped and the batch counts, once, each of its records
  still reserved by this batch into this chunk.

  Input (the number of keys first: 3 + records):
    KEYS[1] batch
    KEYS[2] unqueuedIndex
    KEYS[3] unqueuedJobs
    KEYS[4...] ledger         the ledger entry of each record
    ARGV[1] batchId
    ARGV[2] chunkId
    ARGV[3] chunkNumber
  Output:
    how many this call counted (0 when the chunk was confirmed before)
]]
--- @include "batchIncr"
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('HDEL', KEYS[3], ARGV[2]) == 0 then return 0 end
local n = 0
for i = 4, #KEYS do
  local e = redis.call('HMGET', KEYS[i], 'b', 'q')
  if e[1] == ARGV[1] and e[2] == ARGV[3] then n = n + 1 end
end
if n > 0 then batchIncr(KEYS[1], 'enqueued', n) end
return n
