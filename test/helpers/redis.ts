import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis the tests use: REDIS_URL (set by .ci/run when it starts its own) or the default. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh key prefix per test, so tests never see each other's keys. */
export function testPrefix(name: string): string {
  return `bulkorder-test-${name}-${randomBytes(4).toString('hex')}:acceptance`;
}

export function testRedis(): Redis {
  return new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
}

/** Deletes every key under a prefix (SCAN, never KEYS). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
