--[[
  Compare-and-delete: only the owner of a lock releases it (the watch folder's claim lock, the
  shared token's refresh lock).

  Input:
    KEYS[1] lock
    ARGV[1] owner
  Output:
    1 when released, 0 when the lock is another's or gone
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
