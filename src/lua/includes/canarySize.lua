-- The canary's size: `canaryOrders`, or the batch's own size once its import has queued fewer.
local function canarySize(batchKey, canaryOrders)
  local fields = redis.call('HMGET', batchKey, 'importState', 'enqueued')
  local enqueued = tonumber(fields[2] or '')
  if fields[1] and fields[1] ~= 'importing' and enqueued and enqueued < canaryOrders then
    return math.max(1, enqueued)
  end
  return canaryOrders
end
