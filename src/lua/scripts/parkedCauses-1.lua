--[[
  The cause fields of a slice of a parked index, decoded in Redis so only those cross the network
  (a record carries its payload and source cells: 10,000 of them are megabytes). Record keys are
  the index's members under the prefix, as in pruneParked-1 (one slot under a hash tag).

  Input:
    KEYS[1] index
    ARGV[1] recordKeyPrefix
    ARGV[2] start
    ARGV[3] stop
  Output:
    per member: key, batchId, status ('' none), code, message, parkedAt; a gone record: key only, rest ''
]]
local out = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[3])) do
  local json = redis.call('GET', ARGV[1] .. member)
  if json then
    local r = cjson.decode(json)
    local function s(v) if v == nil or v == cjson.null then return '' end return tostring(v) end
    table.insert(out, member); table.insert(out, s(r.batchId)); table.insert(out, s(r.httpStatus))
    table.insert(out, s(r.code)); table.insert(out, s(r.message)); table.insert(out, s(r.parkedAt))
  else
    for _, v in ipairs({ member, '', '', '', '', '' }) do table.insert(out, v) end
  end
end
return out
