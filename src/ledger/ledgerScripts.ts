/**
 * Lua for the delivery ledger. Each transition is one script so that the check and the
 * write are atomic across any number of importers and workers on any hosts.
 *
 * Ledger entry (a hash, short field names to keep it small):
 *   s state: queued | sending | delivered | dead | held
 *   b batch that queued it, t claim token of the attempt now sending ('' or absent: none), a attempts,
 *   u updated at (ms), r remote order id (encodeRemoteId: keeps its JSON type), h HTTP status,
 *   c error code, m message, d delivered at,
 *   x attempts answered 5xx after the request was sent (the server may have stored the order
 *     before failing: a later delivery is a possible duplicate).
 *   f fingerprint of the content (sha256 of the canonical payload, see fingerprint.ts),
 *   fp the fingerprints of its parts (`recipient=ab12cd34;products=...`), to say what differs,
 *   (j the delivery job, in entries written before the kept job moved to `unqueuedJobs`.)
 *   jc 1 while the kept job is of an order its batch counted as queued before (the breaker's
 *     burst requeue): confirming it does not count it again.
 *
 * From reservation until its job is known to be in BullMQ, an order's job ({name, data} JSON) is
 * kept in the `unqueuedJobs` hash under its order key, and the key is in the `unqueued` index
 * (scored by time), so a reconciler can add a job an importer reserved but never queued (it
 * crashed). Not in the entry itself: one value over 64 bytes turns a hash into Redis's large
 * encoding for good (hash-max-listpack-value), and the entry outlives the job by months.
 */

/**
 * Counts in a batch record: HINCRBY alone, and a record it had to create (the batch expired) is
 * dropped again at once. A batch record has many fields, so one with a single field is new. One
 * command per count where EXISTS + HINCRBY were two.
 */
export const BATCH_INCR = `
local function batchIncr(key, field, by)
  if redis.call('HINCRBY', key, field, by) == by and redis.call('HLEN', key) == 1 then redis.call('DEL', key) end
end
`;

/**
 * KEYS: ledger, jobHash, unqueuedIndex, unqueuedJobs, batch (of batchId).
 * ARGV: batchId, now, retentionMs, force(0|1), staleMs, fingerprint, fingerprintParts, jobJson, orderKey,
 *   alreadyCounted(0|1).
 * Returns {outcome, batch, parts, at, state}: `reserved`; `delivered`, `held` or `queued` (same content,
 * or no fingerprint to compare); `conflict` (the key is delivered, held or in flight with other
 * content: `parts`, `at` and `state` are the earlier entry's). A dead-lettered key is reserved whatever its
 * content: that is how a fixed row is sent. Empty fingerprint: not compared, the kept one stays.
 * alreadyCounted: a dead letter of this same batch goes back into it (the breaker's burst), so the batch
 * counts it pending again in the same step (no moment where the batch looks settled without it).
 */
export const RESERVE = BATCH_INCR + `
local s = redis.call('HGET', KEYS[1], 's')
local b = redis.call('HGET', KEYS[1], 'b') or ''
local f = redis.call('HGET', KEYS[1], 'f')
local forced = ARGV[4] == '1' and s == 'delivered'
if s and s ~= 'dead' and not forced and f and ARGV[6] ~= '' and f ~= ARGV[6] then
  local at = redis.call('HGET', KEYS[1], 'd') or redis.call('HGET', KEYS[1], 'u') or '0'
  return {'conflict', b, redis.call('HGET', KEYS[1], 'fp') or '', at, s}
end
if s == 'delivered' and not forced then return {'delivered', b, '', ''} end
-- Sent again on purpose (--force): earlier 5xx answers say nothing about the new delivery.
if s == 'delivered' then redis.call('HDEL', KEYS[1], 'x') end
if s == 'held' then return {'held', b, '', ''} end
if s == 'sending' then return {'queued', b, '', ''} end
if s == 'queued' then
  if redis.call('EXISTS', KEYS[2]) == 1 then return {'queued', b, '', ''} end
  -- No job behind it and no job kept to rebuild it: an import died between reserving and adding
  -- (before jobs were kept, or a failed job could not be parked). Take it over once it is old
  -- enough that it cannot be a concurrent import between those two steps.
  local u = tonumber(redis.call('HGET', KEYS[1], 'u') or '0')
  if tonumber(ARGV[2]) - u < tonumber(ARGV[5]) then return {'queued', b, '', ''} end
end
redis.call('HSET', KEYS[1], 's', 'queued', 'b', ARGV[1], 'u', ARGV[2])
redis.call('HDEL', KEYS[1], 't', 'j', 'jc')
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'f', ARGV[6], 'fp', ARGV[7]) end
if ARGV[8] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[9], ARGV[8])
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[9])
else
  redis.call('HDEL', KEYS[4], ARGV[9])
  redis.call('ZREM', KEYS[3], ARGV[9])
end
if ARGV[10] == '1' then
  redis.call('HSET', KEYS[1], 'jc', 1)
  if s == 'dead' and b == ARGV[1] then batchIncr(KEYS[5], 'dead', -1) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {'reserved', b, '', ''}
`;

/**
 * The job of a reservation is in BullMQ (added by its importer, or by a reconciler): the kept
 * job is dropped and the batch counts the order as queued, once.
 * KEYS: ledger, batch, unqueuedIndex, unqueuedJobs. ARGV: batchId, orderKey.
 * Returns 1 when this call counted it, 0 when it was counted before or another batch owns the key now.
 */
export const CONFIRM = BATCH_INCR + `
local e = redis.call('HMGET', KEYS[1], 'b', 'jc')
if e[1] ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('HDEL', KEYS[4], ARGV[2]) == 0 and redis.call('HDEL', KEYS[1], 'j') == 0 then return 0 end
-- Read with the batch, so an import's confirm (no flag) costs no command for it.
if e[2] then
  redis.call('HDEL', KEYS[1], 'jc')
  return 0
end
batchIncr(KEYS[2], 'enqueued', 1)
return 1
`;

/**
 * Drops index members a reconciler found nothing left to do for; the kept job of an entry that
 * expired goes too (a live entry's kept job may belong to a reservation made since).
 * KEYS: unqueuedIndex, unqueuedJobs, ledger entry of each order key. ARGV: the order keys.
 */
export const DROP_STRANDED = `
for i, key in ipairs(ARGV) do
  redis.call('ZREM', KEYS[1], key)
  if redis.call('EXISTS', KEYS[i + 2]) == 0 then redis.call('HDEL', KEYS[2], key) end
end
return 1
`;

/**
 * Without a gate (see ClaimGate in ledger.ts), the claim's `admit` always says go.
 */
export const NO_GATE = `
local function admit(key) return 'go', '0' end
`;

/**
 * Claims an order for one attempt; the script is the gate's Lua (defining `admit(key)`) + this.
 * KEYS: ledger, gate (the gate's key; without a gate, the ledger entry again, never read).
 * ARGV: token, now, retentionMs, ambiguousPolicy(hold|resend), askGate(0|1).
 * Returns {outcome, value, verdict}: `wait` (the gate refused; value: when to ask again, ms),
 * `claimed` (value: attempt), `delivered` (value: remote id), `held`, `stale` (value: the claim
 * token found); verdict is the gate's (`go` when not asked).
 * One read, one write: an entry queued within the last half retention keeps the expiry its last
 * change gave it (every change to queued sets u and the expiry), so it outlives this claim by at
 * least half the retention; any other entry gets the full retention again.
 */
export const CLAIM = `
local verdict = 'go'
if ARGV[5] == '1' then
  local at
  verdict, at = admit(KEYS[2])
  if verdict == 'wait' then return {'wait', tostring(at), verdict} end
end
local e = redis.call('HMGET', KEYS[1], 's', 'a', 'r', 't', 'u')
local s = e[1]
if s == 'delivered' then return {'delivered', e[3] or '', verdict} end
if s == 'held' then return {'held', '', verdict} end
if s == 'sending' and ARGV[4] ~= 'resend' then return {'stale', e[4] or '', verdict} end
local a = (tonumber(e[2]) or 0) + 1
redis.call('HSET', KEYS[1], 's', 'sending', 't', ARGV[1], 'u', ARGV[2], 'a', a)
local now = tonumber(ARGV[2])
local retention = tonumber(ARGV[3])
if s ~= 'queued' or now - tonumber(e[5] or '0') > retention / 2 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {'claimed', tostring(a), verdict}
`;

/**
 * KEYS: ledger, batch, deadRecord, deadIndex, heldRecord, heldIndex.
 * ARGV: token, newState(delivered|queued|dead|held), now, retentionMs, orderKey,
 *       remoteId, httpStatus, code, message, parkedRecordJson, parkedRetentionMs, answered5xx(0|1).
 * A parked record holds personal data, so it expires after parkedRetentionMs (PX); its index
 * member is pruned by the readers (src/deadLetter/pruneParked.ts). A record never exists without
 * its index member (both are written and removed together), so ZREM alone tells whether one is left.
 * Returns ok | lost (another attempt owns the order now) | already (delivered before).
 * A delivery after an attempt answered 5xx counts in the batch's `possibleDuplicates`.
 */
export const SETTLE = BATCH_INCR + `
local e = redis.call('HMGET', KEYS[1], 's', 't', 'x', 'c')
local s = e[1]
local t = e[2]
local target = ARGV[2]
if target == 'delivered' then
  -- The API's answer is the truth, even if another worker meanwhile held this order
  -- because our claim looked stale: undo that hold.
  if s == 'delivered' then return 'already' end
  if s == 'held' then
    batchIncr(KEYS[2], 'held', -1)
    redis.call('DEL', KEYS[5])
    redis.call('ZREM', KEYS[6], ARGV[5])
  end
  -- The claim token is emptied, not deleted (readers take '' for none): one command less.
  redis.call('HSET', KEYS[1], 's', 'delivered', 'u', ARGV[3], 'd', ARGV[3], 'r', ARGV[6], 'h', ARGV[7], 't', '')
  if e[4] then redis.call('HDEL', KEYS[1], 'c', 'm') end
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  if redis.call('ZREM', KEYS[4], ARGV[5]) == 1 then redis.call('DEL', KEYS[3]) end
  batchIncr(KEYS[2], 'delivered', 1)
  if tonumber(e[3] or '0') > 0 then batchIncr(KEYS[2], 'possibleDuplicates', 1) end
  return 'ok'
end
if s ~= 'sending' or t ~= ARGV[1] then return 'lost' end
redis.call('HSET', KEYS[1], 's', target, 'u', ARGV[3])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'h', ARGV[7]) end
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'c', ARGV[8], 'm', ARGV[9]) end
if ARGV[12] == '1' then redis.call('HINCRBY', KEYS[1], 'x', 1) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if target == 'queued' then return 'ok' end
redis.call('HDEL', KEYS[1], 't')
if target == 'dead' then
  redis.call('SET', KEYS[3], ARGV[10], 'PX', ARGV[11])
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[5])
  batchIncr(KEYS[2], 'dead', 1)
elseif target == 'held' then
  redis.call('SET', KEYS[5], ARGV[10], 'PX', ARGV[11])
  redis.call('ZADD', KEYS[6], ARGV[3], ARGV[5])
  batchIncr(KEYS[2], 'held', 1)
  -- A held order may exist on the service: the entry must outlive any retention until a
  -- person releases or resolves it (those set the retention again). It holds no personal data,
  -- so it stays after the held record expires, and still blocks a blind re-send.
  redis.call('PERSIST', KEYS[1])
end
return 'ok'
`;
