import type { BackoffSettings } from '../deliverySettings.js';

export type { BackoffSettings };

/**
 * Exponential backoff with "equal jitter" (half fixed, half random), never shorter than the
 * API's Retry-After. With the defaults (2 s doubling to 10 min, 21 attempts) the waits add up
 * to between 63 and 127 minutes (retryWindowMs), so a nightly run rides out an hour-long outage
 * whatever the jitter draws.
 */
export function backoffDelay(
  attemptsMade: number,
  settings: BackoffSettings,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, attemptsMade - 1));
  const jittered = Math.round(exponential / 2 + (random() * exponential) / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** The shortest and longest total wait before the last of `attempts` attempts, jitter included. */
export function retryWindowMs(attempts: number, settings: BackoffSettings): { min: number; max: number } {
  let max = 0;
  for (let made = 1; made < attempts; made++) max += Math.min(settings.maxMs, settings.baseMs * 2 ** (made - 1));
  return { min: max / 2, max };
}
