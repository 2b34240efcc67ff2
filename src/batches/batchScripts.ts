/**
 * Lua for a batch's import life. An importer holds its batch's owner key (PX) and renews it with
 * a heartbeat; when the key lapses the importer is gone (SIGKILL, crash, lost host) and a
 * reconciler closes the batch as `interrupted`, so it can settle on what it queued.
 */

/**
 * The importer's heartbeat. KEYS: batch, owner. ARGV: ttlMs.
 * Returns 1, or 0 when the batch is no longer importing (a reconciler took it for dead): the
 * importer must stop.
 */
export const HEARTBEAT = `
if redis.call('HGET', KEYS[1], 'importState') ~= 'importing' then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return 1
`;

/**
 * importing -> interrupted when the importer's owner key has lapsed.
 * KEYS: batch, owner, importingSet. ARGV: batchId, now.
 * Returns `live` (its importer beats), `closed`, or `done` (it ended another way; dropped from the set).
 */
export const CLOSE_ORPHANED = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 'live' end
redis.call('SREM', KEYS[3], ARGV[1])
if redis.call('HGET', KEYS[1], 'importState') ~= 'importing' then return 'done' end
redis.call('HSET', KEYS[1], 'importState', 'interrupted', 'interruptedAt', ARGV[2])
return 'closed'
`;
