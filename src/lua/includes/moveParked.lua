--[[
  moveParked(prefix, batchId, from, to, fix, count): a record parked (dead or held) in batch `batchId` was
  fixed by a later step, or passed on to a later batch that now counts how it ends: the batch stops counting
  it under `from` and counts it under `to` (`resolved`, `movedOn`, or back: `held` when a release is undone),
  and `fix` (a table: key, was, how, batch, by, note, at; written as JSON in that order) goes first in the batch's history of fixes
  (`<prefix>:batch-fixes:<batchId>`, src/keyspace.ts batchFixes: a list, newest first, at most 1,000, kept as
  long as the batch). A batch gone (retention) is left alone. `count` as settleOne's (batchIncr, or gathered).
  The keys are built here from `prefix` (the keyspace's), in the prefix's hash slot like every key of it.
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

local function moveParked(prefix, batchId, from, to, fix, count)
  if batchId == nil or batchId == '' then return end
  local batchKey = prefix .. ':batch:' .. batchId
  if redis.call('EXISTS', batchKey) == 0 then return end
  count(batchKey, from, -1)
  count(batchKey, to, 1)
  local fixes = prefix .. ':batch-fixes:' .. batchId
  redis.call('LPUSH', fixes, fixJson(fix))
  redis.call('LTRIM', fixes, 0, 999)
  local ttl = redis.call('PTTL', batchKey)
  if ttl > 0 then redis.call('PEXPIRE', fixes, ttl) end
end

local function parkedBatch(json)
  local ok, record = pcall(cjson.decode, json)
  if not ok or type(record) ~= 'table' or type(record.batchId) ~= 'string' then return '' end
  return record.batchId
end
