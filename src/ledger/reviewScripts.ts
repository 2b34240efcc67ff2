/**
 * Lua for the transitions a person makes (bulkorder review / dead-letters), beside the
 * workers' own in ledgerScripts.ts. Same entry layout, plus the review fields:
 *   rv review action (released | resolved), rw who, rt when (ms), rn note.
 *
 * A held order whose ledger entry has expired but whose held record is still kept counts as held
 * (entries written before held ones were made persistent). A held record expires after the
 * parked retention (personal data); the held entry stays.
 */

/**
 * held -> queued in a new batch, the held record removed; the job is kept in `unqueuedJobs` (and
 * the key in the `unqueued` index) until it is confirmed queued, as an import's reservation is.
 * KEYS: ledger, heldRecord, heldIndex, unqueuedIndex, unqueuedJobs. ARGV: newBatch, now, retentionMs, orderKey, who, note, jobJson.
 * Returns {outcome, previousBatch, recordJson}: outcome `released`, or the state found (`missing`).
 */
export const RELEASE = `
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
`;

/**
 * Undoes RELEASE when the job could not be added, so the order is not left queued without a job
 * and missing from the review list. Only while nothing has claimed it since.
 * KEYS: ledger, heldRecord, heldIndex, unqueuedIndex, unqueuedJobs. ARGV: releasedBatch, previousBatch, now, retentionMs, orderKey, recordJson, score,
 * recordTtlMs (what was left of the record's retention).
 */
export const UNRELEASE = `
if redis.call('HGET', KEYS[1], 's') ~= 'queued' or redis.call('HGET', KEYS[1], 'b') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', 'held', 'b', ARGV[2], 'u', ARGV[3])
redis.call('HDEL', KEYS[1], 'rv', 'rw', 'rt', 'rn', 'j', 'jc')
redis.call('ZREM', KEYS[4], ARGV[5])
redis.call('HDEL', KEYS[5], ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SET', KEYS[2], ARGV[6], 'PX', ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[7], ARGV[5])
return 1
`;

/**
 * held -> delivered without sending: a person found the order on the service.
 * KEYS: ledger, batch (of the held entry, read before), heldRecord, heldIndex.
 * ARGV: expectedBatch, now, retentionMs, orderKey, remoteId, who, note.
 * Returns `resolved`, `moved` (the entry changed batch since it was read: read and try again)
 * or the state found.
 */
export const RESOLVE = `
local s = redis.call('HGET', KEYS[1], 's')
if s ~= 'held' and not (not s and redis.call('EXISTS', KEYS[3]) == 1) then return s or 'missing' end
if (redis.call('HGET', KEYS[1], 'b') or '') ~= ARGV[1] then return 'moved' end
redis.call('HSET', KEYS[1], 's', 'delivered', 'u', ARGV[2], 'd', ARGV[2], 'rv', 'resolved', 'rw', ARGV[6], 'rt', ARGV[2])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'r', ARGV[5]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'rn', ARGV[7]) else redis.call('HDEL', KEYS[1], 'rn') end
redis.call('HDEL', KEYS[1], 't')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[4])
if s == 'held' and redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HINCRBY', KEYS[2], 'held', -1)
  redis.call('HINCRBY', KEYS[2], 'delivered', 1)
end
return 'resolved'
`;
