--[[
  Undoes release-5 when the job could not be added, so the order is not left queued without a job
  and missing from the review list. Only while nothing has claimed it since.

  Input:
    KEYS[1] ledger
    KEYS[2] heldRecord
    KEYS[3] heldIndex
    KEYS[4] unqueuedIndex
    KEYS[5] unqueuedJobs
    ARGV[1] releasedBatch
    ARGV[2] previousBatch
    ARGV[3] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[4] retentionMs
    ARGV[5] orderKey
    ARGV[6] recordJson
    ARGV[7] score             when it was parked (ms)
    ARGV[8] recordTtlMs       what was left of the record's retention
    ARGV[9] chunkId           the chunk release-5 kept the job under
    ARGV[10] prefix           the keyspace's: the held batch counts it held again (moveParked)
  Output:
    1 when put back on hold, 0 when it moved on meanwhile
]]
--- @include "batchIncr"
--- @include "moveParked"
--- @include "redisNow"
local now = redisNow(ARGV[3])
if redis.call('HGET', KEYS[1], 's') ~= 'queued' or redis.call('HGET', KEYS[1], 'b') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', 'held', 'b', ARGV[2], 'u', now)
redis.call('HDEL', KEYS[1], 'rv', 'rw', 'rt', 'rn', 'j', 'jc', 'q')
redis.call('ZREM', KEYS[4], ARGV[9])
redis.call('HDEL', KEYS[5], ARGV[9])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SET', KEYS[2], ARGV[6], 'PX', ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[7], ARGV[5])
moveParked({prefix = ARGV[10], batchId = ARGV[2], from = 'resolved', to = 'held', count = batchIncr,
  fix = {key = ARGV[5], was = 'held', how = 'release undone', batch = ARGV[1], at = now}})
return 1
