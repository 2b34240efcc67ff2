import type { Redis, RedisOptions } from 'ioredis';
import { ioredis } from '../cjsPackages.js';

/**
 * Asks one question of a Redis (`url`, else `options` say where) over a connection of its own that
 * never retries, so a Redis that is not there fails the question instead of hanging it: is one
 * answering at all (the demo), what a cluster's seed node says of it. The connection is closed
 * after; throws what connecting or asking threw.
 */
export async function probeRedis<T>(
  url: string | undefined,
  options: Pick<
    RedisOptions,
    'host' | 'port' | 'username' | 'password' | 'tls' | 'connectTimeout' | 'enableOfflineQueue'
  >,
  ask: (probe: Redis) => Promise<T>,
): Promise<T> {
  const settings = { ...options, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null };
  const probe = url === undefined ? new (ioredis().Redis)(settings) : new (ioredis().Redis)(url, settings);
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return await ask(probe);
  } finally {
    probe.disconnect();
  }
}
