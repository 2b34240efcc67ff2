import type { Keyspace } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';
import type { RedisClient } from '../redis.js';
import type { RedisSafety } from '../worker/redisGuard.js';
import { claimEvent } from './eventClaims.js';
import type { Notifier } from './notifier.js';
import type { NotifyEvent } from './notifyEvent.js';

export interface RedisNoticeOptions {
  redis: RedisClient;
  keys: Keyspace;
  notifier: Notifier;
  env: string;
  dashboardUrl?: string;
}

/**
 * Announces what a worker's Redis guard found, once across every worker: `redis-unsafe` when the
 * first guard finds Redis unsafe (the episode is the time it did, SET NX), `redis-safe` when one finds
 * it fit again. Both are claimed by id (claimEvent), so any number of workers send each once.
 */
export async function announceRedisSafety(options: RedisNoticeOptions, safety: RedisSafety): Promise<void> {
  const { redis, keys } = options;
  const now = Date.now();
  const link = options.dashboardUrl === undefined ? undefined : `${options.dashboardUrl}/`;
  const notice = (event: 'redis-unsafe' | 'redis-safe', episode: string, text: string): NotifyEvent => ({
    id: `${event}:${episode}`,
    event,
    env: options.env,
    text: link === undefined ? text : `${text}\n${link}`,
    at: new Date(now).toISOString(),
    ...(safety.code === undefined ? {} : { code: safety.code }),
    ...(safety.reason === undefined ? {} : { reason: safety.reason }),
    ...(link === undefined ? {} : { dashboardUrl: link }),
  });
  if (safety.unsafe) {
    await redis.set(keys.notifyRedisEpisode, String(now), 'NX');
    const episode = await redis.get(keys.notifyRedisEpisode);
    if (episode === null || !(await claimEvent(redis, keys, `redis-unsafe:${episode}`))) return;
    await options.notifier.notify(
      notice(
        'redis-unsafe',
        episode,
        `Redis is unsafe for orders (${options.env}): ${safety.reason ?? safety.code ?? ''}. Workers take no jobs until it is fixed; nothing is lost meanwhile.`,
      ),
    );
    return;
  }
  const episode = await redis.get(keys.notifyRedisEpisode);
  if (episode === null || !(await claimEvent(redis, keys, `redis-safe:${episode}`))) return;
  // Only if it is still this episode (deleteIfOwner-1.lua): another may have begun meanwhile.
  await defineScripts(redis).bulkorderDeleteIfOwner(keys.notifyRedisEpisode, episode);
  const minutes = Math.max(0, Math.round((now - Number(episode)) / 60_000));
  await options.notifier.notify(
    notice(
      'redis-safe',
      episode,
      `Redis is safe again (${options.env}) after ${minutes} min: workers take jobs again.`,
    ),
  );
}
