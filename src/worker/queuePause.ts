import type { RedisClient } from '../redis.js';

/** What BullMQ's `Worker.rateLimit` writes into the limiter key: a count no limiter reaches. */
const MANUAL_LIMIT = String(Number.MAX_SAFE_INTEGER);

/**
 * Sets BullMQ's manual rate limit (the limiter key holding MANUAL_LIMIT for `ms`), unless a
 * manual limit that lasts at least as long is already set. Returns the pause left, in ms.
 * One script: two 429s answered together used to read the limit, then write it, so the shorter
 * Retry-After could land last and cut the longer pause short.
 */
const EXTEND_PAUSE = `
local ms = tonumber(ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[2] then
  local left = redis.call('PTTL', KEYS[1])
  if left >= ms then return left end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ms)
return ms
`;

interface PauseCommands {
  bulkorderExtendPause(limiterKey: string, ms: number, value: string): Promise<number>;
}

/**
 * Pauses every worker of a queue for `ms` (BullMQ honours it in workers that have a limiter;
 * src/assembly/deliveryWorker.ts always sets one). A shorter pause never shortens a longer one.
 * `limiterKey` is the queue's `keys.limiter`. Returns the pause now left, in ms.
 */
export async function extendQueuePause(redis: RedisClient, limiterKey: string, ms: number): Promise<number> {
  if (!('bulkorderExtendPause' in redis)) redis.defineCommand('bulkorderExtendPause', { numberOfKeys: 1, lua: EXTEND_PAUSE });
  return (redis as RedisClient & PauseCommands).bulkorderExtendPause(limiterKey, Math.max(1, Math.ceil(ms)), MANUAL_LIMIT);
}
