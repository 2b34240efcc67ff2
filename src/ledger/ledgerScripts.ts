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
const BATCH_INCR = `
local function batchIncr(key, field, by)
  if redis.call('HINCRBY', key, field, by) == by and redis.call('HLEN', key) == 1 then redis.call('DEL', key) end
end
`;

/**
 * Lua function `reserveOne`: the decision and the write of one reservation, shared by RESERVE (one
 * record, its own job) and RESERVE_CHUNK (several records in one job). Returns nil and the previous
 * batch when it reserved, else the reply {outcome, batch, parts, at, state}:
 * `delivered`, `held` or `queued` (same content, or no fingerprint to compare); `conflict` (the key is
 * delivered, held or in flight with other content: `parts`, `at` and `state` are the earlier entry's).
 * A dead-lettered key is reserved whatever its content: that is how a fixed row is sent. Empty
 * fingerprint: not compared, the kept one stays. A queued entry is alive while its job exists: the
 * job `q` names (chunk `q` of its batch `b`: job id `<b>.<q>`), else the one with the order key as
 * id (`jobPrefix` .. id is its hash). `q`: the number of the chunk job of `batchId` it is reserved
 * into ('' for a job of its own: the field goes). A number, not the job id: the entry keeps it for
 * the retention, and the batch id is in it already.
 * alreadyCounted: a dead letter of this same batch goes back into it (the breaker's burst), so the batch
 * counts it pending again in the same step (no moment where the batch looks settled without it).
 */
const RESERVE_ONE = BATCH_INCR + `
local function reserveOne(ledgerKey, jobPrefix, orderKey, batchId, now, retention, force, staleMs, fp, fpParts, alreadyCounted, batchKey, q)
  local e = redis.call('HMGET', ledgerKey, 's', 'b', 'f', 'q', 'u', 'd')
  local s, b, f = e[1], e[2] or '', e[3]
  local forced = force == '1' and s == 'delivered'
  if s and s ~= 'dead' and not forced and f and fp ~= '' and f ~= fp then
    return {'conflict', b, redis.call('HGET', ledgerKey, 'fp') or '', e[6] or e[5] or '0', s}, b
  end
  if s == 'delivered' and not forced then return {'delivered', b, '', ''}, b end
  -- Sent again on purpose (--force): earlier 5xx answers say nothing about the new delivery.
  if s == 'delivered' then redis.call('HDEL', ledgerKey, 'x') end
  if s == 'held' then return {'held', b, '', ''}, b end
  if s == 'sending' then return {'queued', b, '', ''}, b end
  if s == 'queued' then
    local jobId = orderKey
    if e[4] and e[4] ~= '' then jobId = b .. '.' .. e[4] end
    if redis.call('EXISTS', jobPrefix .. jobId) == 1 then return {'queued', b, '', ''}, b end
    -- No job behind it and no job kept to rebuild it: an import died between reserving and adding
    -- (before jobs were kept, or a failed job could not be parked). Take it over once it is old
    -- enough that it cannot be a concurrent import between those two steps.
    if tonumber(now) - tonumber(e[5] or '0') < tonumber(staleMs) then return {'queued', b, '', ''}, b end
  end
  local fields = {'s', 'queued', 'b', batchId, 'u', now}
  if q ~= '' then fields[#fields + 1] = 'q'; fields[#fields + 1] = q end
  if fp ~= '' then
    fields[#fields + 1] = 'f'; fields[#fields + 1] = fp
    fields[#fields + 1] = 'fp'; fields[#fields + 1] = fpParts
  end
  redis.call('HSET', ledgerKey, unpack(fields))
  if q ~= '' then redis.call('HDEL', ledgerKey, 't', 'j', 'jc') else redis.call('HDEL', ledgerKey, 't', 'j', 'jc', 'q') end
  if alreadyCounted == '1' then
    redis.call('HSET', ledgerKey, 'jc', 1)
    if s == 'dead' and b == batchId then batchIncr(batchKey, 'dead', -1) end
  end
  redis.call('PEXPIRE', ledgerKey, retention)
  return nil, b
end
`;

/**
 * One record into a job of its own (the order key as job id): dead-letters retry, the breaker's
 * burst, an import at one order per job.
 * KEYS: ledger, jobHash (of the order key; declared for cluster routing), unqueuedIndex, unqueuedJobs, batch (of batchId).
 * ARGV: batchId, now, retentionMs, force(0|1), staleMs, fingerprint, fingerprintParts, jobJson, orderKey,
 *   alreadyCounted(0|1), jobPrefix (`<prefix>:<queue>:`).
 * Returns {outcome, batch, parts, at, state}: `reserved`, or reserveOne's reply.
 */
export const RESERVE = RESERVE_ONE + `
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
`;

/**
 * Several records of one batch into one chunk job (BULKORDER_ORDERS_PER_JOB): each is reserved as
 * RESERVE does, with `q` = the chunk's job id, and the chunk's job, holding the reserved records
 * only, is kept in `unqueuedJobs` under the chunk id (indexed in `unqueued`) until CONFIRM_CHUNK.
 * The kept job's JSON is `jobHead` .. the reserved records' fragments joined by ',' .. `jobTail`.
 * KEYS: unqueuedIndex, unqueuedJobs, batch, then the ledger entry of each record.
 * ARGV: batchId, now, retentionMs, force(0|1), staleMs, jobPrefix, chunkId, jobHead, jobTail, the chunk's
 *   number (chunkId is `<batchId>.<number>`), then per record: orderKey, fingerprint, fingerprintParts,
 *   its job fragment (JSON).
 * Returns five values per record: `reserved` and the previous batch, or reserveOne's reply.
 */
export const RESERVE_CHUNK = RESERVE_ONE + `
local replies = {}
local kept = {}
for i = 4, #KEYS do
  local a = 10 + (i - 4) * 4
  local reply, b = reserveOne(KEYS[i], ARGV[6], ARGV[a + 1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[a + 2], ARGV[a + 3], '0', KEYS[3], ARGV[10])
  if not reply then
    reply = {'reserved', b, '', ''}
    kept[#kept + 1] = ARGV[a + 4]
  end
  for j = 1, 5 do replies[#replies + 1] = reply[j] or '' end
end
if #kept > 0 then
  redis.call('HSET', KEYS[2], ARGV[7], ARGV[8] .. table.concat(kept, ',') .. ARGV[9])
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[7])
end
return replies
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
 * A chunk job is in BullMQ: its kept job is dropped and the batch counts, once, each of its records
 * still reserved by this batch into this chunk.
 * KEYS: batch, unqueuedIndex, unqueuedJobs, then the ledger entry of each record. ARGV: batchId, chunkId,
 * the chunk's number. Returns how many this call counted (0 when the chunk was confirmed before).
 */
export const CONFIRM_CHUNK = BATCH_INCR + `
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('HDEL', KEYS[3], ARGV[2]) == 0 then return 0 end
local n = 0
for i = 4, #KEYS do
  local e = redis.call('HMGET', KEYS[i], 'b', 'q')
  if e[1] == ARGV[1] and e[2] == ARGV[3] then n = n + 1 end
end
if n > 0 then batchIncr(KEYS[1], 'enqueued', n) end
return n
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
 * Lua function `claimOne`: claims one record for one attempt unless its state forbids sending it.
 * Returns {outcome, value}: `claimed` (value: attempt), `delivered` (value: remote id), `held`,
 * `stale` (value: the claim token found: an attempt was sending it), `moved` (the record is queued
 * in another job than `jobId` now: not this job's to send), `dead` (only with skipDead: a chunk's
 * record dead-lettered by an earlier attempt of the chunk), `later` (claimable, but `mayClaim` is false).
 * `jobId`: the chunk job's id, '' for a job of its own (the order key as id; entries without `q`).
 * One read, one write: an entry queued within the last half retention keeps the expiry its last
 * change gave it (every change to queued sets u and the expiry), so it outlives this claim by at
 * least half the retention; any other entry gets the full retention again.
 */
const CLAIM_ONE = `
local function claimOne(ledgerKey, token, now, retention, policy, jobId, skipDead, mayClaim)
  local e = redis.call('HMGET', ledgerKey, 's', 'a', 'r', 't', 'u', 'q', 'b')
  local s = e[1]
  local mine = ''
  if e[6] and e[6] ~= '' then mine = (e[7] or '') .. '.' .. e[6] end
  if mine ~= jobId then return 'moved', '' end
  if s == 'delivered' then return 'delivered', e[3] or '' end
  if s == 'held' then return 'held', '' end
  if s == 'dead' and skipDead then return 'dead', '' end
  if s == 'sending' and policy ~= 'resend' then return 'stale', e[4] or '' end
  if not mayClaim then return 'later', '' end
  local a = (tonumber(e[2]) or 0) + 1
  redis.call('HSET', ledgerKey, 's', 'sending', 't', token, 'u', now, 'a', a)
  if s ~= 'queued' or tonumber(now) - tonumber(e[5] or '0') > tonumber(retention) / 2 then redis.call('PEXPIRE', ledgerKey, retention) end
  return 'claimed', tostring(a)
end
`;

/**
 * Claims an order for one attempt; the script is the gate's Lua (defining `admit(key)`) + this.
 * KEYS: ledger, gate (the gate's key; without a gate, the ledger entry again, never read).
 * ARGV: token, now, retentionMs, ambiguousPolicy(hold|resend), askGate(0|1), jobId ('' for a job of its own).
 * Returns {outcome, value, verdict}: `wait` (the gate refused; value: when to ask again, ms), or
 * claimOne's outcome and value; verdict is the gate's (`go` when not asked).
 */
export const CLAIM = CLAIM_ONE + `
local verdict = 'go'
if ARGV[5] == '1' then
  local at
  verdict, at = admit(KEYS[2])
  if verdict == 'wait' then return {'wait', tostring(at), verdict} end
end
local outcome, value = claimOne(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6] or '', false, true)
return {outcome, value, verdict}
`;

/**
 * Claims the records of a chunk job for one attempt of it, the gate asked once; the script is the
 * gate's Lua + this. Half-open (verdict `trial`), one record is claimed: a trial stays one request.
 * KEYS: gate (or any key of the slot when not asked), then the ledger entry of each record.
 * ARGV: token, now, retentionMs, ambiguousPolicy, askGate(0|1), chunkId.
 * Returns {verdict, retryAt, then outcome and value per record}: verdict `wait` (nothing claimed;
 * retryAt: when to ask again, ms), `go` or `trial`; outcomes as claimOne's.
 */
export const CLAIM_MANY = CLAIM_ONE + `
local verdict, at = 'go', '0'
if ARGV[5] == '1' then
  verdict, at = admit(KEYS[1])
  if verdict == 'wait' then return {'wait', tostring(at)} end
end
local replies = {verdict, '0'}
local claimed = 0
for i = 2, #KEYS do
  local outcome, value = claimOne(KEYS[i], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6], true, verdict ~= 'trial' or claimed == 0)
  if outcome == 'claimed' then claimed = claimed + 1 end
  replies[#replies + 1] = outcome
  replies[#replies + 1] = value
end
return replies
`;

/**
 * Lua function `settleOne`: records how one attempt ended. `count(key, field, by)` adds to a batch
 * counter (at once, or gathered by SETTLE_MANY and added once per batch and field).
 * A parked record holds personal data, so it expires after parkedRetentionMs (PX); its index
 * member is pruned by the readers (src/deadLetter/pruneParked.ts). A record never exists without
 * its index member (both are written and removed together), so ZREM alone tells whether one is left.
 * Returns ok | lost (another attempt owns the order now) | already (delivered before).
 * A delivery after an attempt answered 5xx counts in the batch's `possibleDuplicates`.
 */
const SETTLE_ONE = `
local function settleOne(ledgerKey, batchKey, deadKey, deadIndex, heldKey, heldIndex, token, target, now, retention, orderKey, remoteId, status, code, message, parked, parkedRetention, answered5xx, count)
  local e = redis.call('HMGET', ledgerKey, 's', 't', 'x', 'c')
  local s = e[1]
  local t = e[2]
  if target == 'delivered' then
    -- The API's answer is the truth, even if another worker meanwhile held this order
    -- because our claim looked stale: undo that hold.
    if s == 'delivered' then return 'already' end
    if s == 'held' then
      count(batchKey, 'held', -1)
      redis.call('DEL', heldKey)
      redis.call('ZREM', heldIndex, orderKey)
    end
    -- The claim token is emptied, not deleted (readers take '' for none): one command less.
    redis.call('HSET', ledgerKey, 's', 'delivered', 'u', now, 'd', now, 'r', remoteId, 'h', status, 't', '')
    if e[4] then redis.call('HDEL', ledgerKey, 'c', 'm') end
    redis.call('PEXPIRE', ledgerKey, retention)
    if redis.call('ZREM', deadIndex, orderKey) == 1 then redis.call('DEL', deadKey) end
    count(batchKey, 'delivered', 1)
    if tonumber(e[3] or '0') > 0 then count(batchKey, 'possibleDuplicates', 1) end
    return 'ok'
  end
  if s ~= 'sending' or t ~= token then return 'lost' end
  local fields = {'s', target, 'u', now}
  if status ~= '' then fields[#fields + 1] = 'h'; fields[#fields + 1] = status end
  if code ~= '' then
    fields[#fields + 1] = 'c'; fields[#fields + 1] = code
    fields[#fields + 1] = 'm'; fields[#fields + 1] = message
  end
  redis.call('HSET', ledgerKey, unpack(fields))
  if answered5xx == '1' then redis.call('HINCRBY', ledgerKey, 'x', 1) end
  if target == 'held' then
    -- A held order may exist on the service: the entry must outlive any retention until a
    -- person releases or resolves it (those set the retention again). It holds no personal data,
    -- so it stays after the held record expires, and still blocks a blind re-send.
    redis.call('PERSIST', ledgerKey)
  else
    redis.call('PEXPIRE', ledgerKey, retention)
  end
  if target == 'queued' then return 'ok' end
  redis.call('HDEL', ledgerKey, 't')
  if target == 'dead' then
    redis.call('SET', deadKey, parked, 'PX', parkedRetention)
    redis.call('ZADD', deadIndex, now, orderKey)
    count(batchKey, 'dead', 1)
  elseif target == 'held' then
    redis.call('SET', heldKey, parked, 'PX', parkedRetention)
    redis.call('ZADD', heldIndex, now, orderKey)
    count(batchKey, 'held', 1)
  end
  return 'ok'
end
`;

/**
 * KEYS: ledger, batch, deadRecord, deadIndex, heldRecord, heldIndex.
 * ARGV: token, newState(delivered|queued|dead|held), now, retentionMs, orderKey,
 *       remoteId, httpStatus, code, message, parkedRecordJson, parkedRetentionMs, answered5xx(0|1).
 * Returns settleOne's answer.
 */
export const SETTLE = BATCH_INCR + SETTLE_ONE + `
return settleOne(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], batchIncr)
`;

/**
 * Several attempts' ends in one script (a chunk job's records): each as SETTLE, and each batch
 * counter added once per batch and field.
 * KEYS: deadIndex, heldIndex, then per record: ledger, batch, deadRecord, heldRecord.
 * ARGV: now, retentionMs, parkedRetentionMs, then per record: token, newState, orderKey, remoteId,
 *   httpStatus, code, message, parkedRecordJson, answered5xx(0|1).
 * Returns settleOne's answer per record.
 */
export const SETTLE_MANY = BATCH_INCR + SETTLE_ONE + `
local counts = {}
local order = {}
local function gather(key, field, by)
  local id = key .. '|' .. field
  if counts[id] == nil then
    counts[id] = 0
    order[#order + 1] = {key, field, id}
  end
  counts[id] = counts[id] + by
end
local replies = {}
for i = 0, (#KEYS - 2) / 4 - 1 do
  local k = 2 + i * 4
  local a = 3 + i * 9
  replies[#replies + 1] = settleOne(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[1], KEYS[k + 4], KEYS[2], ARGV[a + 1], ARGV[a + 2], ARGV[1], ARGV[2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], ARGV[a + 8], ARGV[3], ARGV[a + 9], gather)
end
for _, c in ipairs(order) do
  if counts[c[3]] ~= 0 then batchIncr(c[1], c[2], counts[c[3]]) end
end
return replies
`;
