--[[
  What the breaker's window holds now, for the breaker's view (read only).

  Input:
    KEYS[1] failures          the SERVER_FAILING signature's failed attempts
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] windowMs
    ARGV[3] bucketPrefix
  Output:
    {total attempts, server-failing attempts, counts (JSON label -> n)}
]]
--- @include "breakerWindow"
--- @include "redisNow"
local now = redisNow(ARGV[1])
local members = redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[2]), '+inf')
local counts = {}
for _, member in ipairs(members) do
  local label = string.match(member, '^(.-)|') or '?'
  counts[label] = (counts[label] or 0) + 1
end
local total = math.max(windowTotal(ARGV[3], now, tonumber(ARGV[2])), #members)
return {total, #members, cjson.encode(counts)}
