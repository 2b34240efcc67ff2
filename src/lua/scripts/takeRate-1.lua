--[[
  Grants `n` requests under the shared rate (src/worker/sharedRate.ts), one slot each, spaced
  1000/rate ms apart from the next free slot; the rate grows by `increase` per second of sending
  (increase / rate per request: additive increase, as TCP grows its window by one segment per
  round trip). From 5% below `hint` (the rate the last 429 was met at) up, divided by `slowProbe` and at
  most 1% of the rate a second (at 10 req/s, +2/s met a strict one-second window within a second,
  and 5% a second still met it every two: a sliding window refuses the send a slot's jitter brought
  early even at 95% of its limit); below, at least 10% of the rate a second:
  it probes slowly where the limit was (as TCP CUBIC does around its last loss), so 429s come
  seldom. From 5% below it on, with no 429 for `quietMs` past the slots already granted, the limit has
  risen, and the rate grows by `probe` of itself per second of sending (issue 37: additive growth took
  95 s from 10 to 200 req/s), until a 429 cuts it back near the API's accepted rate. Rate hash fields:
  rate (requests per second; absent: no rate in force), nextAt (ms: the next free slot), lastCut
  (ms), cuts (how many in this episode), hint, last429 (ms), lowered (ms: when cutRate last lowered the
  rate) and lowerings (how it stretched the slots then: src/worker/sharedRate.ts turn()).

  Input:
    KEYS[1] rate
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] n
    ARGV[3] ceiling           0: none
    ARGV[4] increase
    ARGV[5] slowProbe         1: the same growth everywhere
    ARGV[6] probe             share of the rate added per second beyond the hint (0.5: 50%/s); 0: additive there too
    ARGV[7] quietMs           how long without a 429 before it grows by `probe`
    ARGV[8] horizonMs         0: none (every wave granted); else no slot is granted further ahead than this
                              (but the first wave's when the schedule is free now): a cut or a growth then
                              meets the requests within it, not seconds of slots granted before (at 10 req/s,
                              40 waiting requests held 4 s of slots, and the rate swung around the limit)
    ARGV[9] waves             the waiting waves' sizes in order, comma-separated ('' with horizonMs 0); n is their sum
  Output:
    {first slot (ms), spacing (ms), '1', lowered, lowerings, waves granted (whole, in order)};
    {come back at (ms), '0', '2', lowered, lowerings} when not even the first wave fits within the horizon;
    {'0', '0', '0', '0', ''} when no rate is in force
]]
--- @include "redisNow"
local now = redisNow(ARGV[1])
local h = redis.call('HMGET', KEYS[1], 'rate', 'nextAt', 'hint', 'last429', 'lowered', 'lowerings')
local rate = tonumber(h[1] or '0')
if rate == 0 then return {'0', '0', '0', '0', ''} end
local n = tonumber(ARGV[2])
local at = math.max(now, tonumber(h[2] or '0'))
local horizon = tonumber(ARGV[8] or '0')
local waves = 1
if horizon > 0 then
  -- How many slots lie within the horizon; whole waves only, in order.
  local fit = math.floor((now + horizon - at) * rate / 1000) + 1
  local granted, first = 0, nil
  waves = 0
  for size in string.gmatch(ARGV[9], '%d+') do
    local k = tonumber(size)
    first = first or k
    if granted + k > fit and not (waves == 0 and at <= now) then break end
    granted, waves = granted + k, waves + 1
  end
  if waves == 0 then
    -- Back when the first wave's last slot lies within the horizon (at `at` at the latest: free then).
    return {tostring(math.min(at, at + (first - 1) * 1000 / rate - horizon)), '0', '2', h[5] or '0', h[6] or ''}
  end
  n = granted
end
local ceiling = tonumber(ARGV[3])
local increase = tonumber(ARGV[4])
local hint = tonumber(h[3] or '0')
local probe = tonumber(ARGV[6] or '0')
-- Quiet: no 429 for quietMs after the slots already granted (their requests have yet to meet the limit).
local quiet = now - tonumber(h[4] or '0') >= tonumber(ARGV[7] or '0') + math.max(0, tonumber(h[2] or '0') - now)
-- 5% below the hint (less a rounding: a rate capped there is stored to 14 digits, and read back below it).
local near = hint > 0 and rate >= hint * 0.95 - 1e-6
if near then
  -- Near or above it (where a growth between two 429s had carried it): slowly, unless quiet (below).
  increase = math.min(increase / tonumber(ARGV[5] or '1'), rate * 0.01)
elseif hint > 0 then
  -- Back towards the last 429's rate at 10% a second at least (+2/s took 10 s from 150 to 170).
  increase = math.max(increase, rate * 0.1)
end
if near and probe > 0 and quiet then
  -- n requests of a second's rate: (1 + probe) ^ (n / rate), at least the additive step.
  rate = math.max(rate * (1 + probe) ^ (n / rate), rate + n * increase / rate)
elseif hint > 0 and not near then
  -- No further than 5% below the hint in one grant: the growth of a wave of ten at 8.6 req/s carried it
  -- past the slow zone in one step (to 10.9, with the limit at 10).
  rate = math.min(rate + n * increase / rate, hint * 0.95)
else
  rate = rate + n * increase / rate
end
if ceiling > 0 and rate > ceiling then rate = ceiling end
local spacing = 1000 / rate
redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'nextAt', tostring(at + n * spacing))
return {tostring(at), tostring(spacing), '1', h[5] or '0', h[6] or '', tostring(waves)}
