/** Delays between delivery attempts. */
export interface BackoffSettings {
  /** Delay after the first failure; default 2 s. */
  baseMs: number;
  /** No delay exceeds this; default 10 min. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { baseMs: 2_000, maxMs: 10 * 60_000 };

/**
 * Exponential backoff with "equal jitter" (half fixed, half random), never shorter than the
 * API's Retry-After. With the defaults and 15 attempts the waits add up to about 67 minutes,
 * so a nightly run rides out an API outage of an hour.
 */
export function backoffDelay(attemptsMade: number, settings: BackoffSettings, retryAfterMs?: number, random: () => number = Math.random): number {
  const exponential = Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, attemptsMade - 1));
  const jittered = Math.round(exponential / 2 + (random() * exponential) / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** Sum of the longest waits for `attempts` attempts: how long an outage the defaults ride out. */
export function worstCaseRetryWindowMs(attempts: number, settings: BackoffSettings): number {
  let total = 0;
  for (let made = 1; made < attempts; made++) total += Math.min(settings.maxMs, settings.baseMs * 2 ** (made - 1));
  return total;
}
