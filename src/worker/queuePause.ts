import type { RedisClient } from '../redis.js';
import { defineScripts } from '../lua/defineScripts.js';

/** What BullMQ's `Worker.rateLimit` writes into the limiter key: a count no limiter reaches. */
const MANUAL_LIMIT = String(Number.MAX_SAFE_INTEGER);

/**
 * Pauses every worker of a queue for `ms` (BullMQ honours it in workers that have a limiter;
 * src/assembly/deliveryWorker.ts always sets one). A shorter pause never shortens a longer one.
 * `limiterKey` is the queue's `keys.limiter`. Returns the pause now left, in ms.
 */
export async function extendQueuePause(redis: RedisClient, limiterKey: string, ms: number): Promise<number> {
  // One script (extendPause-1.lua): two 429s answered together must not let the shorter pause land last.
  return defineScripts(redis).bulkorderExtendPause(limiterKey, Math.max(1, Math.ceil(ms)), MANUAL_LIMIT);
}
