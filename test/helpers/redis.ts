import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteKeysUnder, type RedisClient } from '../../src/redis.js';
import { BatchStore } from '../../src/batches/batchStore.js';
import { keyspace } from '../../src/keyspace.js';

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

/**
 * The batch store of a prefix read through a connection of its own, made and closed for this one
 * read: a rig's long-lived connection fails fast while a test has Redis down or restarting.
 */
export async function withFreshBatches<T>(
  url: string,
  prefix: string,
  read: (batches: BatchStore) => Promise<T>,
): Promise<T> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    return await read(new BatchStore(redis, keyspace(prefix), 60_000));
  } finally {
    redis.disconnect();
  }
}
