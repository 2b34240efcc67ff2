import { redisRisk, type RedisClient } from '../redis.js';
import type { DeliverySettings } from '../deliverySettings.js';
import { redisSafety, type RedisSafety } from '../worker/redisGuard.js';

/**
 * Whether the workers of these settings take jobs from this Redis now: the same reading and the same
 * decision as their guard (src/worker/redisGuard.ts), for `status` and the dashboard. A Redis that
 * does not answer the reading counts as safe here: its outage is told elsewhere (exit 5, the dashboard's banner).
 */
export async function readRedisSafety(services: {
  redis: RedisClient;
  delivery: Pick<DeliverySettings, 'requirePersistentRedis' | 'requireVerifiableRedis' | 'redisCheck'>;
}): Promise<RedisSafety> {
  const risk = await redisRisk(services.redis).catch(() => undefined);
  if (risk === undefined) return { unsafe: false };
  return redisSafety(risk, {
    requirePersistence: services.delivery.requirePersistentRedis,
    requireVerifiable: services.delivery.requireVerifiableRedis,
    unverifiable: services.delivery.redisCheck.unverifiable,
  });
}
