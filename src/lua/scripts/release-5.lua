--[[
  A person's release: held -> queued in a new batch, the held record removed; the job is kept in
  `unqueuedJobs` (and the key in the `unqueued` index) until it is confirmed queued, as an import's
  reservation is. Review fields: rv action (released | resolved), rw who, rt when (ms), rn note.
  A held order whose entry expired but whose held record is kept counts as held (entries written
  before held ones were made persistent).

  Input:
    KEYS[1] ledger
    KEYS[2] heldRecord
    KEYS[3] heldIndex
    KEYS[4] unqueuedIndex
    KEYS[5] unqueuedJobs
    ARGV[1] newBatch
    ARGV[2] now               ms
    ARGV[3] retentionMs
    ARGV[4] orderKey
    ARGV[5] who
    ARGV[6] note
    ARGV[7] jobJson
  Output:
    {outcome, previousBatch, recordJson}: outcome `released`, or the state found (`missing`)
]]
local s = redis.call('HGET', KEYS[1], 's')
local record = redis.call('GET', KEYS[2])
if s ~= 'held' and not (not s and record) then return {s or 'missing', '', ''} end
local b = redis.call('HGET', KEYS[1], 'b') or ''
redis.call('HSET', KEYS[1], 's', 'queued', 'b', ARGV[1], 'u', ARGV[2], 'rv', 'released', 'rw', ARGV[5], 'rt', ARGV[2])
redis.call('HDEL', KEYS[1], 't')
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'rn', ARGV[6]) else redis.call('HDEL', KEYS[1], 'rn') end
redis.call('HSET', KEYS[5], ARGV[4], ARGV[7])
-- Its job is a job of its own (the order key as id), not the chunk it may have come in.
redis.call('HDEL', KEYS[1], 'j', 'jc', 'q')
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[4])
return {'released', b, record or ''}
