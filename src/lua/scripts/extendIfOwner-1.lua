--[[
  Compare-and-expire: only the owner of a lock extends it (the watch folder's claim lock, the
  shared token's refresh lock).

  Input:
    KEYS[1] lock
    ARGV[1] owner
    ARGV[2] ttlMs
  Output:
    1 when extended, 0 when the lock is another's or gone
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
