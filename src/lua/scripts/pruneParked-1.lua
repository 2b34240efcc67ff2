--[[
  Drops the parked records older than the cutoff and their index members, atomically, so no list
  shows a ghost and a record parked anew meanwhile (a fresh score) is never touched. The records
  expire on their own (SET PX in settleOne); this also enforces the retention on records parked
  before they had an expiry, or under a longer retention. At most 1000 per call.

  Input:
    KEYS[1] index
    ARGV[1] cutoff            ms, inclusive
    ARGV[2] recordKeyPrefix   `<prefix>:<kind>:` (same hash tag as the index)
  Output:
    how many members it removed
]]
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1000)
for _, member in ipairs(members) do
  redis.call('DEL', ARGV[2] .. member)
  redis.call('ZREM', KEYS[1], member)
end
return #members
