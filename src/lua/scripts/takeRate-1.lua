--[[
  Grants `n` requests under the shared rate (src/worker/sharedRate.ts), one slot each, spaced
  1000/rate ms apart from the next free slot; the rate grows by `increase` per second of sending
  (increase / rate per request: additive increase, as TCP grows its window by one segment per
  round trip). Within 5% of `hint` (the rate the last 429 was met at), divided by `slowProbe`:
  it probes slowly where the limit was (as TCP CUBIC does around its last loss), so 429s come
  seldom; beyond, the limit moved and it grows as before. Rate hash fields:
  rate (requests per second; absent: no rate in force), nextAt (ms: the next free slot), lastCut
  (ms), cuts (how many in this episode), hint.

  Input:
    KEYS[1] rate
    ARGV[1] now               ms
    ARGV[2] n
    ARGV[3] ceiling           0: none
    ARGV[4] increase
    ARGV[5] slowProbe         1: the same growth everywhere
  Output:
    {first slot (ms), spacing (ms), '1'}, or {'0', '0', '0'} when no rate is in force
]]
local h = redis.call('HMGET', KEYS[1], 'rate', 'nextAt', 'hint')
local rate = tonumber(h[1] or '0')
if rate == 0 then return {'0', '0', '0'} end
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local ceiling = tonumber(ARGV[3])
local increase = tonumber(ARGV[4])
local hint = tonumber(h[3] or '0')
if hint > 0 and rate >= hint * 0.95 and rate <= hint * 1.05 then increase = increase / tonumber(ARGV[5] or '1') end
rate = rate + n * increase / rate
if ceiling > 0 and rate > ceiling then rate = ceiling end
local spacing = 1000 / rate
local at = math.max(now, tonumber(h[2] or '0'))
redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'nextAt', tostring(at + n * spacing))
return {tostring(at), tostring(spacing), '1'}
