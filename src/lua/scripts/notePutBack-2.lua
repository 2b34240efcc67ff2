--[[
  Notes a chunk job that a worker puts back (to rest delayed) in its batch's set of put-back jobs,
  which waking the batch reads instead of BullMQ's whole delayed set (src/batches/putBackChunks.ts).
  The set expires with the batch record (its TTL copied, as the batch's history of fixes does). Both
  keys are under the target's prefix: one hash slot on a Redis Cluster.

  Input:
    KEYS[1] batch     the batch record (a hash; its TTL is the set's)
    KEYS[2] putBack   the batch's put-back chunk job ids (a set)
    ARGV[1] jobId
  Output:
    1 when noted; 0 when the batch is gone (nothing would wake it)
]]
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
