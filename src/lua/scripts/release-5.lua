--[[
  A person's release: held -> queued in a new batch, in a chunk of one of its own, the held record
  removed; the chunk's job is kept in `unqueuedJobs` (and its id in the `unqueued` index) until it is
  confirmed queued (confirmChunk), as an import's reservation is. Review fields: rv action (released | resolved), rw who, rt when (ms), rn note.
  A held order whose entry expired but whose held record is kept counts as held (entries written
  before held ones were made persistent).
  The batch it was held in counts it `resolved` from now on (a person decided; the new batch counts how
  it ends), and its history of fixes says who released it into which batch.

  Input:
    KEYS[1] ledger
    KEYS[2] heldRecord
    KEYS[3] heldIndex
    KEYS[4] unqueuedIndex
    KEYS[5] unqueuedJobs
    ARGV[1] newBatch
    ARGV[2] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[3] retentionMs
    ARGV[4] orderKey
    ARGV[5] who
    ARGV[6] note
    ARGV[7] jobJson
    ARGV[8] chunkId           `<newBatch>.<number>`
    ARGV[9] chunkNumber
    ARGV[10] prefix           the keyspace's: the held batch stops counting it held (moveParked)
  Output:
    {outcome, previousBatch, recordJson}: outcome `released`, or the state found (`missing`)
]]
--- @include "decideHeld"
--- @include "redisNow"
local now = redisNow(ARGV[2])
local s = redis.call('HGET', KEYS[1], 's')
local record = redis.call('GET', KEYS[2])
if s ~= 'held' and not (not s and record) then return {s or 'missing', '', ''} end
local b = redis.call('HGET', KEYS[1], 'b') or ''
-- Queued in its chunk of the new batch, not the chunk it may have come in.
redis.call('HSET', KEYS[1], 's', 'queued', 'b', ARGV[1], 'q', ARGV[9], 'u', now, 'rv', 'released', 'rw', ARGV[5], 'rt', now)
redis.call('HDEL', KEYS[1], 't', 'j', 'jc')
redis.call('HSET', KEYS[5], ARGV[8], ARGV[7])
redis.call('ZADD', KEYS[4], now, ARGV[8])
decideHeld({
  ledgerKey = KEYS[1], recordKey = KEYS[2], indexKey = KEYS[3], orderKey = ARGV[4], retentionMs = ARGV[3],
  note = ARGV[6], wasHeld = s == 'held', prefix = ARGV[10], batchId = b, to = 'resolved',
  fix = {key = ARGV[4], was = 'held', how = 'released', by = ARGV[5], batch = ARGV[1], at = now},
})
return {'released', b, record or ''}
