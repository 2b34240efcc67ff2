--[[
  importing -> interrupted when the importer's owner key has lapsed (SIGKILL, crash, lost host), so
  the batch can settle on what it queued.

  Input:
    KEYS[1] batch
    KEYS[2] owner
    KEYS[3] importingSet
    ARGV[1] batchId
    ARGV[2] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
  Output:
    `live` (its importer beats), `closed`, or `done` (it ended another way; dropped from the set)
]]
--- @include "redisNow"
local now = redisNow(ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then return 'live' end
redis.call('SREM', KEYS[3], ARGV[1])
if redis.call('HGET', KEYS[1], 'importState') ~= 'importing' then return 'done' end
redis.call('HSET', KEYS[1], 'importState', 'interrupted', 'interruptedAt', now)
return 'closed'
