--[[
  reserveOne(p): the decision and the write of one record's reservation into a chunk job (reserveChunk).
  Returns nil and the previous batch when it reserved, else the reply {outcome, batch, parts, at, state}:
  `delivered`, `held` or `queued` (same content, or no fingerprint to compare); `conflict` (the key is
  delivered, held or in flight with other content: `parts`, `at` and `state` are the earlier entry's).
  `p`, one table built once per record by the caller (named fields: a swapped pair cannot pass
  silently); reserveChunk's ARGV names where a field is one:
    p.ledgerKey          the record's ledger entry
    p.batchKey           the batch's record (`batchId` ends it: an earlier batch's key is built from it)
    p.jobPrefix          `<prefix>:<queue>:`: a job's hash is this and its id
    p.orderKey
    p.batchId            the batch it is reserved into
    p.now                ms (Redis's, redisNow)
    p.retentionMs        the ledger entry's retention
    p.force              0 | 1 (--force) | r (--retry-refused)
    p.staleMs            a queued entry without its job is taken over once this old
    p.fingerprint        '' when not compared
    p.fingerprintParts   kept beside the fingerprint (shown on a conflict)
    p.alreadyCounted     0|1: the batch counted it before (the breaker's burst)
    p.chunkNumber        `q`: the number of the chunk job of `batchId` it is reserved into
  A dead-lettered key with other content is reserved: that is how a fixed row is sent. With the same
  content (an unchanged re-run) it is `refused` (refused before: its dead letter stays open, nothing is
  sent) unless `force` is `1` (--force) or `r` (--retry-refused), or its batch (`b`, beside `batchKey`)
  was cancelled because its file changed while read (failCode FILE_CHANGED_WHILE_READ: never sent). Empty
  fingerprint: not compared, the kept one stays. A queued entry is alive while its job exists: the
  job `q` names (chunk `q` of its batch `b`: job id `<b>.<q>`), else (an entry of an earlier
  release's job of one) the one with the order key as id (`jobPrefix` .. id is its hash). `q`, the
  chunk number, is a number, not the job id: the entry keeps it for the retention, and the batch id
  is in it already.
  alreadyCounted: a dead letter of this same batch goes back into it (the breaker's burst), so the batch
  counts it pending again in the same step (no moment where the batch looks settled without it).
]]
--- @include "batchIncr"
local function reserveOne(p)
  local ledgerKey, batchId, batchKey, now = p.ledgerKey, p.batchId, p.batchKey, p.now
  local force, fp = p.force, p.fingerprint
  local e = redis.call('HMGET', ledgerKey, 's', 'b', 'f', 'q', 'u', 'd')
  local s, b, f = e[1], e[2] or '', e[3]
  local forced = force == '1' and s == 'delivered'
  if s and s ~= 'dead' and not forced and f and fp ~= '' and f ~= fp then
    return {'conflict', b, redis.call('HGET', ledgerKey, 'fp') or '', e[6] or e[5] or '0', s}, b
  end
  if s == 'dead' and force == '0' and f and fp ~= '' and f == fp then
    -- Unless its batch was cancelled because its file changed while it was read: never sent, not refused.
    local was = string.sub(batchKey, 1, #batchKey - #batchId) .. b
    if b == '' or redis.call('HGET', was, 'failCode') ~= 'FILE_CHANGED_WHILE_READ' then
      return {'refused', b, '', e[5] or '0', s}, b
    end
  end
  if s == 'delivered' and not forced then return {'delivered', b, '', ''}, b end
  -- Sent again on purpose (--force): earlier 5xx answers say nothing about the new delivery.
  if s == 'delivered' then redis.call('HDEL', ledgerKey, 'x') end
  if s == 'held' then return {'held', b, '', ''}, b end
  if s == 'sending' then return {'queued', b, '', ''}, b end
  if s == 'queued' then
    local jobId = p.orderKey
    if e[4] and e[4] ~= '' then jobId = b .. '.' .. e[4] end
    if redis.call('EXISTS', p.jobPrefix .. jobId) == 1 then return {'queued', b, '', ''}, b end
    -- No job behind it and no job kept to rebuild it: an import died between reserving and adding
    -- (before jobs were kept, or a failed job could not be parked). Take it over once it is old
    -- enough that it cannot be a concurrent import between those two steps.
    if tonumber(now) - tonumber(e[5] or '0') < tonumber(p.staleMs) then return {'queued', b, '', ''}, b end
  end
  local fields = {'s', 'queued', 'b', batchId, 'u', now, 'q', p.chunkNumber}
  if fp ~= '' then
    fields[#fields + 1] = 'f'; fields[#fields + 1] = fp
    fields[#fields + 1] = 'fp'; fields[#fields + 1] = p.fingerprintParts
  end
  redis.call('HSET', ledgerKey, unpack(fields))
  redis.call('HDEL', ledgerKey, 't', 'j', 'jc')
  if p.alreadyCounted == '1' then
    redis.call('HSET', ledgerKey, 'jc', 1)
    if s == 'dead' and b == batchId then batchIncr(batchKey, 'dead', -1) end
  end
  redis.call('PEXPIRE', ledgerKey, p.retentionMs)
  return nil, b
end
