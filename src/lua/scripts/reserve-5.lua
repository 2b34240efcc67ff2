--[[
  Reserves one record into a job of its own (the order key as job id): dead-letters retry, the
  breaker's burst, an import at one order per job. The job is kept in `unqueuedJobs` (indexed in
  `unqueued`) until confirm-4. Ledger entry fields: src/ledger/ledgerEntry.ts.

  Input:
    KEYS[1] ledger            the order's ledger entry
    KEYS[2] jobHash           the job hash of the order key (declared for cluster routing)
    KEYS[3] unqueuedIndex
    KEYS[4] unqueuedJobs
    KEYS[5] batch             the batch record of batchId
    ARGV[1] batchId
    ARGV[2] now               ms
    ARGV[3] retentionMs
    ARGV[4] force             0|1
    ARGV[5] staleMs
    ARGV[6] fingerprint       '' when not compared
    ARGV[7] fingerprintParts
    ARGV[8] jobJson           {name, data}; '' keeps no job
    ARGV[9] orderKey
    ARGV[10] alreadyCounted   0|1
    ARGV[11] jobPrefix        `<prefix>:<queue>:`
  Output:
    {outcome, batch, parts, at, state}: `reserved`, or reserveOne's reply
]]
--- @include "reserveOne"
local reply, b = reserveOne(KEYS[1], ARGV[11], ARGV[9], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[10], KEYS[5], '')
if reply then return reply end
if ARGV[8] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[9], ARGV[8])
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[9])
else
  redis.call('HDEL', KEYS[4], ARGV[9])
  redis.call('ZREM', KEYS[3], ARGV[9])
end
return {'reserved', b, '', ''}
