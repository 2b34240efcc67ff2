--[[
  Drops index members a reconciler found nothing left to do for; the kept job of an entry that
  expired goes too (a live entry's kept job may belong to a reservation made since).

  Input (the number of keys first: 2 + order keys):
    KEYS[1] unqueuedIndex
    KEYS[2] unqueuedJobs
    KEYS[3...] ledger         the ledger entry of each order key
    ARGV[1...] orderKey       one per ledger key, in the same order
  Output:
    1
]]
for i, key in ipairs(ARGV) do
  redis.call('ZREM', KEYS[1], key)
  if redis.call('EXISTS', KEYS[i + 2]) == 0 then redis.call('HDEL', KEYS[2], key) end
end
return 1
