import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import { redisTime } from '../redis/redisClock.js';

/**
 * The watermark lives as long as some notifier keeps it alive: a restart within this keeps it
 * (nothing replayed, nothing lost); notifications off for longer start afresh (nothing replayed).
 * It matches the oldest batch ever announced (batchWatch: 24 h).
 */
const WATERMARK_TTL_MS = 24 * 3600_000;
/** A sent event's claim outlives every reason to look at that event again. */
const CLAIM_TTL_MS = 8 * 24 * 3600_000;

/**
 * When notifications start counting: set once (SET NX) by the first notifier to start, kept by
 * every running notifier's refresh. Events before it are never sent, so switching notifications
 * on replays nothing; being in Redis, it survives a restart of every worker.
 */
export async function notifyWatermark(redis: RedisClient, keys: Keyspace, at?: number): Promise<number> {
  // Redis's clock: batches start at Redis's time too (BatchStore.create).
  const now = at ?? (await redisTime(redis));
  const replies = await redis
    .multi()
    .set(keys.notifyFrom, String(now), 'PX', WATERMARK_TTL_MS, 'NX')
    .get(keys.notifyFrom)
    .pexpire(keys.notifyFrom, WATERMARK_TTL_MS)
    .exec();
  const value = replies?.[1]?.[1] as string | null | undefined;
  return Number(value ?? now);
}

/** Claims one event (SET NX): true for exactly one caller across every worker process, who sends it. */
export async function claimEvent(redis: RedisClient, keys: Keyspace, eventId: string): Promise<boolean> {
  return (await redis.set(keys.notifySent(eventId), String(Date.now()), 'PX', CLAIM_TTL_MS, 'NX')) === 'OK';
}
