--[[
  Grants `n` requests under the shared rate (src/worker/sharedRate.ts), one slot each, spaced
  1000/rate ms apart from the next free slot; the rate grows by `increase` per second of sending
  (increase / rate per request: additive increase, as TCP grows its window by one segment per
  round trip). Within 5% of `hint` (the rate the last 429 was met at), divided by `slowProbe` and at
  most 5% of the rate a second (at 10 req/s, +2/s met a strict one-second window within a second);
  below, at least 10% of the rate a second:
  it probes slowly where the limit was (as TCP CUBIC does around its last loss), so 429s come
  seldom. Beyond 5% above it with no 429 for `quietMs` past the slots already granted, the limit has risen, and the rate
  grows by `probe` of itself per second of sending (issue 37: additive growth took 95 s from 10 to
  200 req/s), until a 429 cuts it back near the API's accepted rate. Rate hash fields:
  rate (requests per second; absent: no rate in force), nextAt (ms: the next free slot), lastCut
  (ms), cuts (how many in this episode), hint, last429 (ms).

  Input:
    KEYS[1] rate
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] n
    ARGV[3] ceiling           0: none
    ARGV[4] increase
    ARGV[5] slowProbe         1: the same growth everywhere
    ARGV[6] probe             share of the rate added per second beyond the hint (0.5: 50%/s); 0: additive there too
    ARGV[7] quietMs           how long without a 429 before it grows by `probe`
  Output:
    {first slot (ms), spacing (ms), '1'}, or {'0', '0', '0'} when no rate is in force
]]
--- @include "redisNow"
local now = redisNow(ARGV[1])
local h = redis.call('HMGET', KEYS[1], 'rate', 'nextAt', 'hint', 'last429')
local rate = tonumber(h[1] or '0')
if rate == 0 then return {'0', '0', '0'} end
local n = tonumber(ARGV[2])
local ceiling = tonumber(ARGV[3])
local increase = tonumber(ARGV[4])
local hint = tonumber(h[3] or '0')
local probe = tonumber(ARGV[6] or '0')
-- Quiet: no 429 for quietMs after the slots already granted (their requests have yet to meet the limit).
local quiet = now - tonumber(h[4] or '0') >= tonumber(ARGV[7] or '0') + math.max(0, tonumber(h[2] or '0') - now)
if hint > 0 and rate >= hint * 0.95 and rate <= hint * 1.05 then
  increase = math.min(increase / tonumber(ARGV[5] or '1'), rate * 0.05)
elseif hint > 0 and rate < hint * 0.95 then
  -- Back towards the last 429's rate at 10% a second at least (+2/s took 10 s from 150 to 170).
  increase = math.max(increase, rate * 0.1)
end
if hint > 0 and rate > hint * 1.05 and probe > 0 and quiet then
  -- n requests of a second's rate: (1 + probe) ^ (n / rate), at least the additive step.
  rate = math.max(rate * (1 + probe) ^ (n / rate), rate + n * increase / rate)
else
  rate = rate + n * increase / rate
end
if ceiling > 0 and rate > ceiling then rate = ceiling end
local spacing = 1000 / rate
local at = math.max(now, tonumber(h[2] or '0'))
redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'nextAt', tostring(at + n * spacing))
return {tostring(at), tostring(spacing), '1'}
