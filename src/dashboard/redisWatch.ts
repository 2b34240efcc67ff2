import type { RedisClient } from '../redis.js';

/** Whether the dashboard's Redis connections answer, and since when they do not. */
export interface RedisWatch {
  /** When the first of the connections was lost (ms), or undefined while all are ready. */
  downSince(): number | undefined;
}

/**
 * Follows the connections' events: ioredis reconnects on its own (with backoff), so the dashboard
 * only has to say so meanwhile and serve pages again once every connection is `ready`.
 */
export function watchRedis(clients: readonly RedisClient[]): RedisWatch {
  const lostAt = new Map<RedisClient, number>();
  for (const redis of clients) {
    const lost = () => {
      if (!lostAt.has(redis)) lostAt.set(redis, Date.now());
    };
    redis.on('close', lost);
    redis.on('error', lost);
    redis.on('ready', () => lostAt.delete(redis));
  }
  return {
    downSince() {
      // A lazy connection not opened yet ('wait') is not down; one that is reconnecting is.
      for (const redis of clients) {
        if (redis.status === 'ready' || redis.status === 'wait') lostAt.delete(redis);
        else if (!lostAt.has(redis)) lostAt.set(redis, Date.now());
      }
      return lostAt.size === 0 ? undefined : Math.min(...lostAt.values());
    },
  };
}
