--[[
  batchIncr(key, field, by): adds to a count in a batch record. HINCRBY alone, and a record it had
  to create (the batch expired) is dropped again at once: a batch record has many fields, so one
  with a single field is new. One command per count where EXISTS + HINCRBY were two.
]]
local function batchIncr(key, field, by)
  if redis.call('HINCRBY', key, field, by) == by and redis.call('HLEN', key) == 1 then redis.call('DEL', key) end
end
