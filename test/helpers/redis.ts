import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteKeysUnder, type RedisClient } from '../../src/redis.js';

/** The Redis the tests use: REDIS_URL (set by .ci/run when it starts its own) or the default. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh key prefix per test, so tests never see each other's keys. */
export function testPrefix(name: string): string {
  return `bulkorder-test-${name}-${randomBytes(4).toString('hex')}:acceptance`;
}

export function testRedis(): Redis {
  return new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
}

/** Deletes every key under a prefix. */
export async function deletePrefix(redis: RedisClient, prefix: string): Promise<void> {
  await deleteKeysUnder(redis, prefix);
}
