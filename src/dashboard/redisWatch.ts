import type { RedisClient } from '../redis.js';

/** Whether the dashboard's Redis connections answer, and since when they do not. */
export interface RedisWatch {
  /** When the first of the connections was lost (ms), or undefined while all are ready. */
  downSince(): number | undefined;
  /**
   * After a failed request: the time Redis went away, asking it when the connections still look
   * ready (a killed server's socket can fail a command before ioredis reports the close).
   */
  confirmDown(): Promise<number | undefined>;
}

/** How long a ping may take before Redis counts as away. */
const PING_TIMEOUT_MS = 1000;

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
  const downSince = (): number | undefined => {
    // A lazy connection not opened yet ('wait') is not down; one that is reconnecting is.
    for (const redis of clients) {
      if (redis.status === 'ready' || redis.status === 'wait') lostAt.delete(redis);
      else if (!lostAt.has(redis)) lostAt.set(redis, Date.now());
    }
    return lostAt.size === 0 ? undefined : Math.min(...lostAt.values());
  };
  return {
    downSince,
    async confirmDown() {
      const known = downSince();
      if (known !== undefined) return known;
      const failed = await Promise.all(clients.map((redis) => answers(redis).then((ok) => !ok)));
      return failed.some(Boolean) ? Date.now() : undefined;
    },
  };
}

async function answers(redis: RedisClient): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)));
  try {
    return await Promise.race([
      redis.ping().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
