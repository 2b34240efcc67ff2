--[[
  Several attempts' ends in one script (a chunk job's records), each by settleOne, and each batch
  counter added once per batch and field; the sending index and the supersede links are written and
  read once for all the records (settleOne's p.unsend and p.replaced).

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
-- As text once (%.17g: as redis.call converts a number), for the commands that write it per record.
local now = string.format('%.17g', redisNow(ARGV[1]))
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
local n = (#KEYS - 2) / 4
local prefix = ARGV[4]
-- The keyspace-wide indexes, once per script rather than once per record: the claims leaving
-- `sending` in one ZREM at the end (nothing here reads it), the `supersedes` links read in one HMGET
-- when the first is asked for (each given once, as the HGET and HDEL of one would).
local unsent = {}
local function unsend(orderKey) unsent[#unsent + 1] = orderKey end
local links
local function replaced(orderKey)
  if links == nil then
    local orderKeys = {}
    for i = 0, n - 1 do orderKeys[i + 1] = ARGV[7 + i * 9] end
    local found = redis.call('HMGET', prefix .. ':supersedes', unpack(orderKeys))
    links = {}
    for i = 1, n do links[orderKeys[i]] = found[i] end
  end
  local old = links[orderKey]
  links[orderKey] = false
  return old or nil
end
local replies = {}
for i = 0, n - 1 do
  local k = 2 + i * 4
  local a = 4 + i * 9
  replies[#replies + 1] = settleOne({
    ledgerKey = KEYS[k + 1], batchKey = KEYS[k + 2], deadKey = KEYS[k + 3], deadIndex = KEYS[1],
    heldKey = KEYS[k + 4], heldIndex = KEYS[2], token = ARGV[a + 1], newState = ARGV[a + 2], now = now,
    retentionMs = ARGV[2], orderKey = ARGV[a + 3], remoteId = ARGV[a + 4], httpStatus = ARGV[a + 5],
    code = ARGV[a + 6], message = ARGV[a + 7], parkedRecord = ARGV[a + 8], parkedRetentionMs = ARGV[3],
    answered5xx = ARGV[a + 9], count = gather, prefix = prefix, unsend = unsend, replaced = replaced,
  })
end
if #unsent > 0 then redis.call('ZREM', prefix .. ':sending', unpack(unsent)) end
for _, c in ipairs(order) do
  if counts[c[3]] ~= 0 then batchIncr(c[1], c[2], counts[c[3]]) end
end
return replies
