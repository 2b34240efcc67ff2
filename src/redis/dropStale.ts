import type { RedisClient } from '../redis.js';

/** A sorted set of ids by time, and the hash of each id's details kept beside it. */
export interface TimedIds {
  /** The sorted set: id -> time (ms). */
  index: string;
  /** The hash: id -> details. */
  details: string;
}

/**
 * Forgets the ids scored at or before `cutoff`, in the index and in the details hash at once
 * (live workers by heartbeat, possible duplicates by when they were flagged).
 */
export async function dropStale(redis: RedisClient, { index, details }: TimedIds, cutoff: number): Promise<void> {
  const stale = await redis.zrangebyscore(index, '-inf', cutoff);
  if (stale.length > 0)
    await redis
      .multi()
      .zrem(index, ...stale)
      .hdel(details, ...stale)
      .exec();
}
