--[[
  Removes index members whose record is gone (it expired under a retention shorter than today's),
  checking each record in the script, so a member parked anew meanwhile stays.

  Input:
    KEYS[1] index
    ARGV[1] recordKeyPrefix
    ARGV[2...] member         the order keys to check
  Output:
    how many it removed
]]
local removed = 0
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 0 then removed = removed + redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return removed
