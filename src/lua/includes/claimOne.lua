--[[
  claimOne(p): claims one record of a chunk job for one attempt unless its state forbids sending it.
  Returns {outcome, value}: `claimed` (value: attempt), `delivered` (value: remote id), `held`,
  `stale` (value: the claim token found: an attempt was sending it), `moved` (the record is queued
  in another job than `p.chunkId` now: not this job's to send), `dead` (dead-lettered by an earlier
  attempt of the chunk), `later` (claimable, but `p.mayClaim` is false), `vanished` (no entry at all
  while its job exists: Redis evicted or lost it; a move always leaves the entry, naming its new
  job, so a missing one is never a move, and it may have been delivered before: never sent).
  `p`, one table built once per record by the caller (named fields: a swapped pair cannot pass
  silently); claimMany's ARGV names where a field is one:
    p.ledgerKey          the record's ledger entry
    p.token              the attempt's claim token
    p.now                ms (Redis's, redisNow), as text (what redis.call makes of the number: no command
                         converts it again)
    p.retentionMs        the ledger entry's retention
    p.ambiguousPolicy    hold | resend (resend: an entry left `sending` is claimed again)
    p.chunkId            the chunk job's id, '' for an earlier release's job of one record (the order
                         key as id; entries without `q`)
    p.mayClaim           boolean: false answers `later` where it would claim (a trial's other records)
  A claim goes into the sending index (keyspace `sending`: order key scored by claim time, which
  settleOne leaves) by the caller, claimMany, in one ZADD for all the records it claimed.
  One read, one write: an entry queued within the last half retention keeps the expiry its last
  change gave it (every change to queued sets u and the expiry), so it outlives this claim by at
  least half the retention; any other entry gets the full retention again.
]]
local function claimOne(p)
  local ledgerKey, now = p.ledgerKey, p.now
  local e = redis.call('HMGET', ledgerKey, 's', 'a', 'r', 't', 'u', 'q', 'b')
  local s = e[1]
  -- Every entry has `s` from its reservation on; entries expire only after the retention, which
  -- outlives any job. Missing: evicted or lost, not moved (see above).
  if not s then return 'vanished', '' end
  local mine = ''
  if e[6] and e[6] ~= '' then mine = (e[7] or '') .. '.' .. e[6] end
  if mine ~= p.chunkId then return 'moved', '' end
  if s == 'delivered' then return 'delivered', e[3] or '' end
  if s == 'held' then return 'held', '' end
  if s == 'dead' then return 'dead', '' end
  if s == 'sending' and p.ambiguousPolicy ~= 'resend' then return 'stale', e[4] or '' end
  if not p.mayClaim then return 'later', '' end
  -- Text once: HSET would convert the number, and the reply again.
  local a = tostring((tonumber(e[2]) or 0) + 1)
  redis.call('HSET', ledgerKey, 's', 'sending', 't', p.token, 'u', now, 'a', a)
  local retention = p.retentionMs
  if s ~= 'queued' or tonumber(now) - tonumber(e[5] or '0') > tonumber(retention) / 2 then redis.call('PEXPIRE', ledgerKey, retention) end
  return 'claimed', a
end
