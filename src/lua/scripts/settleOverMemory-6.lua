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
local now = redisNow(ARGV[3])
return settleOne(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2], now, ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], batchIncr, ARGV[13])
