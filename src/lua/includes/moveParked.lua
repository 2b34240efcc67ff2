--[[
  moveParked(p): a record parked (dead or held) in batch `p.batchId` was fixed by a later step, or passed on
  to a later batch that now counts how it ends: the batch stops counting it under `p.from` and counts it under
  `p.to`, and `p.fix` goes first in the batch's history of fixes (`<prefix>:batch-fixes:<batchId>`,
  src/keyspace.ts batchFixes: a list, newest first, at most 1,000, kept as long as the batch). A batch gone
  (retention) is left alone. `p`, one table with named fields (a swapped pair cannot pass silently):
    p.prefix             the keyspace's: the keys are built here from it, in its hash slot like every key of it
    p.batchId            the batch the record was parked in ('' or nil: nothing to move)
    p.from               the count it leaves: dead | held | resolved
    p.to                 the count it joins: resolved | movedOn | delivered, or held when a release is undone
    p.fix                a table: key, was, how, batch, by, note, at (written as JSON in that order, absent ones left out)
    p.count              function(key, field, by) as settleOne's (batchIncr, or settleMany's gather)
  parkedBatch(json): the batch a parked record (JSON) was parked in ('' when unreadable).
]]
local FIX_FIELDS = {'key', 'was', 'how', 'batch', 'by', 'note', 'at'}
local function fixJson(fix)
  local parts = {}
  for _, name in ipairs(FIX_FIELDS) do
    if fix[name] ~= nil then parts[#parts + 1] = cjson.encode(name) .. ':' .. cjson.encode(fix[name]) end
  end
  return '{' .. table.concat(parts, ',') .. '}'
end

local function moveParked(p)
  local batchId, prefix, count = p.batchId, p.prefix, p.count
  if batchId == nil or batchId == '' then return end
  local batchKey = prefix .. ':batch:' .. batchId
  if redis.call('EXISTS', batchKey) == 0 then return end
  count(batchKey, p.from, -1)
  count(batchKey, p.to, 1)
  local fixes = prefix .. ':batch-fixes:' .. batchId
  redis.call('LPUSH', fixes, fixJson(p.fix))
  redis.call('LTRIM', fixes, 0, 999)
  local ttl = redis.call('PTTL', batchKey)
  if ttl > 0 then redis.call('PEXPIRE', fixes, ttl) end
end

local function parkedBatch(json)
  local ok, record = pcall(cjson.decode, json)
  if not ok or type(record) ~= 'table' or type(record.batchId) ~= 'string' then return '' end
  return record.batchId
end
