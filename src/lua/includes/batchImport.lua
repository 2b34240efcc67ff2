--[[
  What a batch's circuit needs of its import, read once (one HMGET of the batch record):
    batchImport(batchKey)            -> {importState, enqueued, readAt, failCode}
    canarySize(b, canaryOrders)      the canary's size: `canaryOrders`, or the batch's own size once its
                                     import has ended with fewer queued.
    stillRead(b, canaryOrders)       nothing of the batch may go yet: its file is still read (importState
                                     `importing` without `readAt`), or it is read but less than a whole
                                     canary is queued (canarySize is not final until then). The same rule
                                     as readBatchView's (src/batches/putBackChunks.ts).
]]
local function batchImport(batchKey)
  local f = redis.call('HMGET', batchKey, 'importState', 'enqueued', 'readAt', 'failCode')
  return { importState = f[1], enqueued = tonumber(f[2] or ''), readAt = f[3], failCode = f[4] }
end

local function canarySize(b, canaryOrders)
  if b.importState and b.importState ~= 'importing' and b.enqueued and b.enqueued < canaryOrders then
    return math.max(1, b.enqueued)
  end
  return canaryOrders
end

local function stillRead(b, canaryOrders)
  return b.importState == 'importing' and (not b.readAt or (b.enqueued or 0) < canaryOrders)
end
