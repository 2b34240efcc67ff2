--[[
  Reserves records of one batch into one chunk job (an import's BULKORDER_ORDERS_PER_JOB, a
  requeue's one): each with `q` = the chunk's number, and the chunk's job, holding the reserved
  records only, is kept in `unqueuedJobs` under the chunk id (indexed in `unqueued`) until
  confirmChunk. The kept job's JSON is jobHead .. the reserved records' fragments joined by ',' .. jobTail.

  Input (the number of keys first: 3 + records):
    KEYS[1] unqueuedIndex
    KEYS[2] unqueuedJobs
    KEYS[3] batch
    KEYS[4...] ledger         the ledger entry of each record
    ARGV[1] batchId
    ARGV[2] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[3] retentionMs
    ARGV[4] force             0 | 1 (--force) | r (--retry-refused: a dead key with the same content too)
    ARGV[5] staleMs
    ARGV[6] jobPrefix         `<prefix>:<queue>:`
    ARGV[7] chunkId           `<batchId>.<number>`
    ARGV[8] jobHead
    ARGV[9] jobTail
    ARGV[10] chunkNumber
    ARGV[11] alreadyCounted   0|1: the batch counted these records before (the breaker's burst)
    ARGV[12...] per record: orderKey fingerprint fingerprintParts fragment
  Output:
    five values per record: `reserved` and the previous batch, or reserveOne's reply
]]
--- @include "reserveOne"
--- @include "redisNow"
local now = redisNow(ARGV[2])
local replies = {}
local kept = {}
for i = 4, #KEYS do
  local a = 11 + (i - 4) * 4
  local reply, b = reserveOne({
    ledgerKey = KEYS[i], batchKey = KEYS[3], jobPrefix = ARGV[6], orderKey = ARGV[a + 1], batchId = ARGV[1],
    now = now, retentionMs = ARGV[3], force = ARGV[4], staleMs = ARGV[5], fingerprint = ARGV[a + 2],
    fingerprintParts = ARGV[a + 3], alreadyCounted = ARGV[11], chunkNumber = ARGV[10],
  })
  if not reply then
    reply = {'reserved', b, '', ''}
    kept[#kept + 1] = ARGV[a + 4]
  end
  for j = 1, 5 do replies[#replies + 1] = reply[j] or '' end
end
if #kept > 0 then
  redis.call('HSET', KEYS[2], ARGV[7], ARGV[8] .. table.concat(kept, ',') .. ARGV[9])
  redis.call('ZADD', KEYS[1], now, ARGV[7])
end
return replies
