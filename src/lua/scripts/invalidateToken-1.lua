--[[
  Drops the shared token only if it is the one that failed; a newer one stays.

  Input:
    KEYS[1] token             the shared token's hash
    ARGV[1] tokenId
  Output:
    1 when dropped, 0 otherwise
]]
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
