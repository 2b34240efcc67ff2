--[[
  claimOne: claims one record for one attempt unless its state forbids sending it.
  Returns {outcome, value}: `claimed` (value: attempt), `delivered` (value: remote id), `held`,
  `stale` (value: the claim token found: an attempt was sending it), `moved` (the record is queued
  in another job than `jobId` now: not this job's to send), `dead` (only with skipDead: a chunk's
  record dead-lettered by an earlier attempt of the chunk), `later` (claimable, but `mayClaim` is false).
  `jobId`: the chunk job's id, '' for a job of its own (the order key as id; entries without `q`).
  One read, one write: an entry queued within the last half retention keeps the expiry its last
  change gave it (every change to queued sets u and the expiry), so it outlives this claim by at
  least half the retention; any other entry gets the full retention again.
]]
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
