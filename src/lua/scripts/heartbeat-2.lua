--[[
  The importer's heartbeat. An importer holds its batch's owner key (PX) and renews it; when the
  key lapses the importer is gone and closeOrphaned-3 closes the batch as `interrupted`.

  Input:
    KEYS[1] batch
    KEYS[2] owner
    ARGV[1] ttlMs
  Output:
    1, or 0 when the batch is no longer importing (a reconciler took it for dead): the importer must stop
]]
if redis.call('HGET', KEYS[1], 'importState') ~= 'importing' then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return 1
