--[[
  Several attempts' ends in one script (a chunk job's records): each as settle-6, and each batch
  counter added once per batch and field.

  Input (the number of keys first: 2 + 4 per record):
    KEYS[1] deadIndex
    KEYS[2] heldIndex
    KEYS[3...] per record: ledger batch deadRecord heldRecord
    ARGV[1] now               ms
    ARGV[2] retentionMs
    ARGV[3] parkedRetentionMs
    ARGV[4...] per record: token newState orderKey remoteId httpStatus code message parkedRecord answered5xx
  Output:
    settleOne's answer per record
]]
--- @include "batchIncr"
--- @include "settleOne"
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
