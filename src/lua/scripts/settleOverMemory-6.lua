#!lua flags=allow-oom
--[[
  settleMany.lua's write of one record for a worker that stops while Redis is full: flagged allow-oom,
  so Redis takes it above maxmemory (a few hundred bytes per answer in flight, bounded by the worker's
  concurrency).
  An answer the API gave is recorded rather than left `sending`, to be held as "outcome unknown".
  Needs Redis 7 (script flags); an older Redis refuses it, and the order is then held for review.

  Input:
    KEYS[1] ledger
    KEYS[2] batch
    KEYS[3] deadRecord
    KEYS[4] deadIndex
    KEYS[5] heldRecord
    KEYS[6] heldIndex
    ARGV[1] token
    ARGV[2] newState          delivered|queued|dead|held
    ARGV[3] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[4] retentionMs
    ARGV[5] orderKey
    ARGV[6] remoteId          encodeRemoteId
    ARGV[7] httpStatus
    ARGV[8] code
    ARGV[9] message
    ARGV[10] parkedRecord     JSON
    ARGV[11] parkedRetentionMs
    ARGV[12] answered5xx      0|1
    ARGV[13] prefix           the keyspace's
  Output:
    settleOne's answer: ok | lost | already
]]
--- @include "batchIncr"
--- @include "settleOne"
--- @include "redisNow"
-- As text (%.17g: as redis.call converts a number), as settleMany gives it.
local now = string.format('%.17g', redisNow(ARGV[3]))
local prefix = ARGV[13]
local function unsend(orderKey) redis.call('ZREM', prefix .. ':sending', orderKey) end
local function replaced(orderKey) return redis.call('HGET', prefix .. ':supersedes', orderKey) or nil end
return settleOne({
  ledgerKey = KEYS[1], batchKey = KEYS[2], deadKey = KEYS[3], deadIndex = KEYS[4], heldKey = KEYS[5],
  heldIndex = KEYS[6], token = ARGV[1], newState = ARGV[2], now = now, retentionMs = ARGV[4], orderKey = ARGV[5],
  remoteId = ARGV[6], httpStatus = ARGV[7], code = ARGV[8], message = ARGV[9], parkedRecord = ARGV[10],
  parkedRetentionMs = ARGV[11], answered5xx = ARGV[12], count = batchIncr, prefix = prefix, unsend = unsend,
  replaced = replaced,
})
