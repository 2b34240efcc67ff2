import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extendQueuePause } from '../../src/worker/queuePause.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';

const redis = testRedis();
const prefix = testPrefix('queuepause');
const queue = new Queue('pause-test', { connection: redis.duplicate(), prefix });
const limiter = queue.toKey('limiter');
/** What deliveryWorker's limiter uses for "no limit": BullMQ reports a manual limit's TTL against it. */
const UNLIMITED = 1_000_000_000;

beforeAll(async () => {
  await deletePrefix(redis, prefix);
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  await queue.close();
  redis.disconnect();
});

describe('extendQueuePause (the pause a 429 asks for)', () => {
  it('sets a pause BullMQ honours, as Worker.rateLimit would', async () => {
    await redis.del(limiter);
    expect(await extendQueuePause(redis, limiter, 2000)).toBe(2000);
    const ttl = await queue.getRateLimitTtl(UNLIMITED);
    expect(ttl).toBeGreaterThan(1500);
    expect(ttl).toBeLessThanOrEqual(2000);
  });

  it('two 429s answered together: the shorter Retry-After, sent last, does not cut the longer pause short', async () => {
    await redis.del(limiter);
    // Both are written before either is answered; the short one reaches Redis last.
    const [long, short] = await Promise.all([extendQueuePause(redis, limiter, 3000), extendQueuePause(redis, limiter, 100)]);
    expect(long).toBe(3000);
    expect(short).toBeGreaterThan(2500);
    expect(await redis.pttl(limiter)).toBeGreaterThan(2500);
  });

  it('a longer pause extends a shorter one', async () => {
    await redis.del(limiter);
    await extendQueuePause(redis, limiter, 200);
    expect(await extendQueuePause(redis, limiter, 4000)).toBe(4000);
    expect(await redis.pttl(limiter)).toBeGreaterThan(3500);
  });

  it("the limiter's own count is not a pause: a 429 replaces it", async () => {
    // A configured requests-per-second limit counts jobs in the same key.
    await redis.set(limiter, '7', 'PX', 60_000);
    expect(await extendQueuePause(redis, limiter, 1500)).toBe(1500);
    expect(await redis.pttl(limiter)).toBeLessThanOrEqual(1500);
    expect(await queue.getRateLimitTtl(UNLIMITED)).toBeGreaterThan(1000);
  });
});
