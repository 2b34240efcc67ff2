/**
 * Lua for the shared request rate (src/worker/sharedRate.ts): every worker process paces its
 * requests from one hash, so a 429 slows them all together.
 *
 * Hash fields: rate (requests per second; absent: no rate in force), nextAt (ms: the next free
 * slot), lastCut (ms: when the rate was last cut), cuts (how many times in this episode). The hash
 * expires when no 429 came for a while: the API's limit may have gone.
 */

/**
 * Grants `n` requests under the rate, one slot each, spaced 1000/rate ms apart from the next free
 * slot; the rate grows by `increase` per second of sending (increase / rate per request: additive
 * increase, as TCP grows its window by one segment per round trip).
 * KEYS: rate. ARGV: now, n, ceiling (0: none), increase.
 * Returns {first slot (ms), spacing (ms), '1'}, or {'0', '0', '0'} when no rate is in force.
 */
export const TAKE = `
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or '0')
if rate == 0 then return {'0', '0', '0'} end
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local ceiling = tonumber(ARGV[3])
rate = rate + n * tonumber(ARGV[4]) / rate
if ceiling > 0 and rate > ceiling then rate = ceiling end
local spacing = 1000 / rate
local at = math.max(now, tonumber(redis.call('HGET', KEYS[1], 'nextAt') or '0'))
redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'nextAt', tostring(at + n * spacing))
return {tostring(at), tostring(spacing), '1'}
`;

/**
 * A 429. Without a rate in force, one starts: half of what every live worker was sending (this
 * process's measured rate times the workers; halved as TCP halves its window on a first loss), and
 * no slot before Retry-After. With one, the
 * rate is cut by `decrease`, once per 429 to a request granted a Retry-After (at most 5 s) after the
 * last cut: the API's window still holds requests sent at the old rate, and their refusals say
 * nothing new (TCP cuts once per window). Never below `floor`.
 * KEYS: rate, workers (live workers by heartbeat). ARGV: now, retryAfterMs, floor, decrease,
 * grantedAt, localRate, staleMs, expireMs, paced (1: the request was granted under a rate).
 * Returns the rate now in force (requests per second).
 */
export const CUT = `
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
`;
