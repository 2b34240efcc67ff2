import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { backoffDelay, retryWindowMs } from '../../src/worker/backoff.js';

const settings = { baseMs: 2_000, maxMs: 600_000 };

describe('retry backoff', () => {
  it('doubles from the base, with equal jitter (half fixed, half random), capped', () => {
    expect(backoffDelay(1, settings, undefined, () => 0)).toBe(1_000);
    expect(backoffDelay(1, settings, undefined, () => 1)).toBe(2_000);
    expect(backoffDelay(4, settings, undefined, () => 0.5)).toBe(12_000); // 16 s: 8 s fixed + half of 8 s
    expect(backoffDelay(30, settings, undefined, () => 1)).toBe(600_000);
  });

  it("never waits less than the API's Retry-After", () => {
    expect(backoffDelay(1, settings, 45_000, () => 0)).toBe(45_000);
    expect(backoffDelay(12, settings, 45_000, () => 1)).toBe(600_000);
  });

  it('with the documented defaults, rides out an hour-long outage whatever the jitter draws', () => {
    const { delivery } = loadConfig({ env: {} });
    const window = retryWindowMs(delivery.attempts, delivery.backoff);
    expect(window.min).toBeGreaterThanOrEqual(60 * 60_000);
    expect(window.max).toBeLessThanOrEqual(3 * 60 * 60_000); // and gives up the same night
  });
});
