--[[
  Several attempts' ends in one script (a chunk job's records), each by settleOne, and each batch
  counter added once per batch and field.

  Input (the number of keys first: 2 + 4 per record):
    KEYS[1] deadIndex
    KEYS[2] heldIndex
    KEYS[3...] per record: ledger batch deadRecord heldRecord
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] retentionMs
    ARGV[3] parkedRetentionMs
    ARGV[4] prefix            the keyspace's (moveParked builds an earlier batch's keys from it)
    ARGV[5...] per record: token newState orderKey remoteId httpStatus code message parkedRecord answered5xx
  Output:
    settleOne's answer per record
]]
--- @include "batchIncr"
--- @include "settleOne"
--- @include "redisNow"
local now = redisNow(ARGV[1])
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
  local a = 4 + i * 9
  replies[#replies + 1] = settleOne({
    ledgerKey = KEYS[k + 1], batchKey = KEYS[k + 2], deadKey = KEYS[k + 3], deadIndex = KEYS[1],
    heldKey = KEYS[k + 4], heldIndex = KEYS[2], token = ARGV[a + 1], newState = ARGV[a + 2], now = now,
    retentionMs = ARGV[2], orderKey = ARGV[a + 3], remoteId = ARGV[a + 4], httpStatus = ARGV[a + 5],
    code = ARGV[a + 6], message = ARGV[a + 7], parkedRecord = ARGV[a + 8], parkedRetentionMs = ARGV[3],
    answered5xx = ARGV[a + 9], count = gather, prefix = ARGV[4],
  })
end
for _, c in ipairs(order) do
  if counts[c[3]] ~= 0 then batchIncr(c[1], c[2], counts[c[3]]) end
end
return replies
