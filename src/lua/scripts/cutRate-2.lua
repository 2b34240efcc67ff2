--[[
  A 429. `accepted` below is what the API accepted over the last second (its window): every worker's
  per-second counts (`<bucketPrefix><epoch second>`, added every 250 ms; the previous second
  weighted by its share still in the window) plus this process's not yet added (ARGV accepted).
  Without a rate in force, one starts, and no slot before Retry-After: with `measuredStart`, at
  `startShare` of `accepted`; otherwise (BULKORDER_RATE_ADAPT=halve), or when nothing was accepted,
  at half of this process's sending rate times the live workers, as TCP halves its window on a first loss.
  With a rate, it is cut by `decrease`, once per 429 to a request granted a Retry-After (at most
  5 s) after the last cut: the API's window still holds requests sent at the old rate, and their
  refusals say little new (TCP cuts once per window): each trims half of `decrease`. And on every
  paced 429 it is kept at or below `startShare` of `accepted` (issue 37): a limit that dropped is followed within the API's window,
  whatever the cuts' pace (cut by cut, 50 -> 10 req/s took 15 s and the growth between cuts held
  the rate at twice the limit). Never below `floor`. `hint` keeps the rate a 429 was met at (the
  measure, then each cut's rate before it, or the accepted rate when that is lower): takeRate probes
  slowly near it, and fast beyond it. The hash expires when no 429 came for a while: the API's limit may have gone.
  Whenever a rate in force is lowered, the slots already granted and not yet due are stretched from now by
  old rate / new rate (at most tenfold): the next free slot here, and each waiting request's in its
  process, which learns of it from `lowered` (ms: when) and `lowerings` (the last 16 lowerings,
  `<ms>:<stretch>;` each; applied in order by src/worker/sharedRate.ts turn()). So a cut paces the requests already waiting, not only those
  granted after them (at 10 req/s, 40 requests in flight held four seconds of slots at the old rate: the
  cut came four seconds late, and the rate swung around the limit), and every process stretches the
  same schedule by the same factors, so no slot falls on another's and no gap opens between them.

  Input:
    KEYS[1] rate
    KEYS[2] workers           live workers by heartbeat (sorted set)
    ARGV[1] now               '': Redis's TIME (src/lua/includes/redisNow.lua); ms: that time (tests)
    ARGV[2] retryAfterMs
    ARGV[3] floor
    ARGV[4] decrease
    ARGV[5] grantedAt
    ARGV[6] localRate         this process's sending rate (requests/s)
    ARGV[7] staleMs
    ARGV[8] expireMs
    ARGV[9] paced             1: the request was granted under a rate
    ARGV[10] startShare       the share of the accepted rate a rate starts at, and is kept below
    ARGV[11] bucketPrefix     '': no counts of accepted answers
    ARGV[12] accepted         this process's accepted answers not yet in the counts
    ARGV[13] measuredStart    1: the first rate starts from the accepted rate; 0: halve the sending rate
    ARGV[14] ownAccepted      this process's accepted answers over the last second: times the live workers, the
                              least `accepted` is taken to be (other processes add theirs every 250 ms, so a 429
                              in a run's first second read 3 of 50 accepted: a first rate began at 2.7, and a
                              rate of 90 was cut to 1 and its waiting slots stretched ninety-fold)
  Output:
    {the rate now in force (requests per second), lowered (ms), lowerings}
]]
--- @include "redisNow"
local now = redisNow(ARGV[1])
local floor = tonumber(ARGV[3])
local keep = 1 - tonumber(ARGV[4])
local share = tonumber(ARGV[10])
local workers = math.max(1, redis.call('ZCOUNT', KEYS[2], now - tonumber(ARGV[7]), '+inf'))
local accepted = 0
if ARGV[11] ~= '' then
  local second = math.floor(now / 1000)
  local current = tonumber(redis.call('GET', ARGV[11] .. second) or '0')
  local previous = tonumber(redis.call('GET', ARGV[11] .. (second - 1)) or '0')
  accepted = current + previous * (1 - (now % 1000) / 1000) + tonumber(ARGV[12])
  -- Never below this worker's own share times the live workers: the others' last 250 ms are not in the counts yet.
  accepted = math.max(accepted, tonumber(ARGV[14] or '0') * workers)
end
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
local before = rate
if rate == 0 then
  local measured, start = tonumber(ARGV[6]) * workers, 0.5
  if ARGV[13] == '1' and accepted > 0 then measured, start = accepted, share end
  rate = math.max(floor, measured * start)
  redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'lastCut', now, 'nextAt', now + tonumber(ARGV[2]), 'cuts', 1,
    'hint', tostring(measured))
else
  if ARGV[9] == '1' and tonumber(ARGV[5]) >= tonumber(redis.call('HGET', KEYS[1], 'lastCut') or '0') + math.min(tonumber(ARGV[2]), 5000) then
    redis.call('HSET', KEYS[1], 'hint', tostring(rate))
    rate = math.max(floor, rate * keep)
    redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'lastCut', now)
    redis.call('HINCRBY', KEYS[1], 'cuts', 1)
  elseif ARGV[9] == '1' then
    -- Within the cut's window each further paced 429 trims half the decrease: refusals come in
    -- proportion to the excess (22 in the second after a drop to a fifth: x0.32), one or two near a steady limit.
    rate = math.max(floor, rate * (1 - tonumber(ARGV[4]) / 2))
    redis.call('HSET', KEYS[1], 'rate', tostring(rate))
  end
  -- Paced only: the 429s of a burst sent before any rate was in force say nothing of the rate (at a run's
  -- start they read the counts before every worker had added its own, cut 45 req/s to 5, and stretched the slots).
  if ARGV[9] == '1' and accepted > 0 and accepted * share < rate then
    rate = math.max(floor, accepted * share)
    redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'hint', tostring(accepted))
  end
end
if before > 0 and rate < before then
  -- At most tenfold: a measure gone wrong must not park every waiting request for a minute.
  local stretch = math.min(before / rate, 10)
  local nextAt = tonumber(redis.call('HGET', KEYS[1], 'nextAt') or '0')
  if nextAt > now then nextAt = now + (nextAt - now) * stretch end
  local kept = {}
  for entry in string.gmatch(redis.call('HGET', KEYS[1], 'lowerings') or '', '[^;]+') do kept[#kept + 1] = entry end
  kept[#kept + 1] = now .. ':' .. stretch
  local lowerings = table.concat(kept, ';', math.max(1, #kept - 15)) .. ';'
  redis.call('HSET', KEYS[1], 'lowered', now, 'nextAt', tostring(nextAt), 'lowerings', lowerings)
end
redis.call('HSET', KEYS[1], 'last429', now)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
local known = redis.call('HMGET', KEYS[1], 'lowered', 'lowerings')
return {tostring(rate), known[1] or '0', known[2] or ''}
