import { afterEach, describe, expect, it } from 'vitest';
import { adoptClock, RedisClock } from '../../src/redis/redisClock.js';
import { testRedis } from '../helpers/redis.js';

/**
 * adoptClock (issue 37, one clock): a worker process's Date.now() reads Redis's clock, so BullMQ's
 * delayed jobs and schedules are timed on it; undone in any order, Date.now() is the host's again.
 * Real Redis; no keys written.
 */
const redis = testRedis();
const hostNow = Date.now;
afterEach(() => {
  Date.now = hostNow;
});

describe('adoptClock', () => {
  it('puts Date.now() on the adopted clocks, the last one first, and gives the host its clock back in any order of undoing', async () => {
    const first = await new RedisClock(redis).start();
    const second = await new RedisClock(redis).start();
    try {
      const undoFirst = adoptClock(first);
      expect(Date.now).toBe(first.now);
      const undoSecond = adoptClock(second);
      expect(Date.now).toBe(second.now);
      // The first undone while the second is in force: the second stays.
      undoFirst();
      expect(Date.now).toBe(second.now);
      undoFirst();
      expect(Date.now).toBe(second.now);
      undoSecond();
      expect(Date.now).toBe(hostNow);
    } finally {
      first.stop();
      second.stop();
      await redis.quit();
    }
  });
});
