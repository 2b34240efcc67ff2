--[[
  A 429. Without a rate in force, one starts, and no slot before Retry-After. With `bucketPrefix`:
  at `startShare` of what the API accepted over the last second (its window), from every worker's
  per-second counts (`<bucketPrefix><epoch second>`, added every 250 ms; the previous second
  weighted by its share still in the window) plus this process's not yet added (`accepted`).
  Without (BULKORDER_RATE_ADAPT=halve), or when nothing was accepted: half of this process's sending
  rate times the live workers, as TCP halves its window on a first loss.
  With a rate, it is cut by `decrease`, once per 429 to a request granted a Retry-After (at most
  5 s) after the last cut: the API's window still holds requests sent at the old rate, and their
  refusals say nothing new (TCP cuts once per window). Never below `floor`. `hint` keeps the rate
  a 429 was met at (the measure, then each cut's rate before it): takeRate probes slowly near it.
  The hash expires when no 429 came for a while: the API's limit may have gone.

  Input:
    KEYS[1] rate
    KEYS[2] workers           live workers by heartbeat (sorted set)
    ARGV[1] now               ms
    ARGV[2] retryAfterMs
    ARGV[3] floor
    ARGV[4] decrease
    ARGV[5] grantedAt
    ARGV[6] localRate         this process's sending rate (requests/s)
    ARGV[7] staleMs
    ARGV[8] expireMs
    ARGV[9] paced             1: the request was granted under a rate
    ARGV[10] startShare       the share of the accepted rate the first rate starts at
    ARGV[11] bucketPrefix     '': halve the sending rate
    ARGV[12] accepted         this process's accepted answers not yet in the counts
  Output:
    the rate now in force (requests per second)
]]
local now = tonumber(ARGV[1])
local floor = tonumber(ARGV[3])
local keep = 1 - tonumber(ARGV[4])
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
if rate == 0 then
  local workers = math.max(1, redis.call('ZCOUNT', KEYS[2], now - tonumber(ARGV[7]), '+inf'))
  local measured, share = tonumber(ARGV[6]) * workers, 0.5
  if ARGV[11] ~= '' then
    local second = math.floor(now / 1000)
    local current = tonumber(redis.call('GET', ARGV[11] .. second) or '0')
    local previous = tonumber(redis.call('GET', ARGV[11] .. (second - 1)) or '0')
    local accepted = current + previous * (1 - (now % 1000) / 1000) + tonumber(ARGV[12])
    if accepted > 0 then measured, share = accepted, tonumber(ARGV[10]) end
  end
  rate = math.max(floor, measured * share)
  redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'lastCut', now, 'nextAt', now + tonumber(ARGV[2]), 'cuts', 1,
    'hint', tostring(measured))
elseif ARGV[9] == '1' and tonumber(ARGV[5]) >= tonumber(redis.call('HGET', KEYS[1], 'lastCut') or '0') + math.min(tonumber(ARGV[2]), 5000) then
  redis.call('HSET', KEYS[1], 'hint', tostring(rate))
  rate = math.max(floor, rate * keep)
  redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'lastCut', now)
  redis.call('HINCRBY', KEYS[1], 'cuts', 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
return tostring(rate)
