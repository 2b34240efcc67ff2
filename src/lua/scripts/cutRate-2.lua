--[[
  A 429. Without a rate in force, one starts: half of what every live worker was sending (this
  process's measured rate times the workers; halved as TCP halves its window on a first loss), and
  no slot before Retry-After. With one, the rate is cut by `decrease`, once per 429 to a request
  granted a Retry-After (at most 5 s) after the last cut: the API's window still holds requests
  sent at the old rate, and their refusals say nothing new (TCP cuts once per window). Never below
  `floor`. The hash expires when no 429 came for a while: the API's limit may have gone.

  Input:
    KEYS[1] rate
    KEYS[2] workers           live workers by heartbeat (sorted set)
    ARGV[1] now               ms
    ARGV[2] retryAfterMs
    ARGV[3] floor
    ARGV[4] decrease
    ARGV[5] grantedAt
    ARGV[6] localRate
    ARGV[7] staleMs
    ARGV[8] expireMs
    ARGV[9] paced             1: the request was granted under a rate
  Output:
    the rate now in force (requests per second)
]]
local now = tonumber(ARGV[1])
local floor = tonumber(ARGV[3])
local keep = 1 - tonumber(ARGV[4])
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
if rate == 0 then
  local workers = math.max(1, redis.call('ZCOUNT', KEYS[2], now - tonumber(ARGV[7]), '+inf'))
  rate = math.max(floor, tonumber(ARGV[6]) * workers / 2)
  redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'lastCut', now, 'nextAt', now + tonumber(ARGV[2]), 'cuts', 1)
elseif ARGV[9] == '1' and tonumber(ARGV[5]) >= tonumber(redis.call('HGET', KEYS[1], 'lastCut') or '0') + math.min(tonumber(ARGV[2]), 5000) then
  rate = math.max(floor, rate * keep)
  redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'lastCut', now)
  redis.call('HINCRBY', KEYS[1], 'cuts', 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
return tostring(rate)
