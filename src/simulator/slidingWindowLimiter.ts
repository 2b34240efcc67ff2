/**
 * A global sliding-window rate limit: at most `limit` admitted requests in any window of
 * `windowMs`. The timestamps of the last `limit` admissions live in a ring buffer, so a
 * check is O(1): a request is admitted when the oldest of them has left the window.
 * Refused requests do not count, so a client that backs off gets through again.
 */
export class SlidingWindowLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #ring: Float64Array;
  #next = 0;

  /** `limit` 0 admits everything. */
  constructor(limit: number, windowMs = 1000) {
    this.#limit = Math.max(0, Math.floor(limit));
    this.#windowMs = windowMs;
    // Filled with -Infinity: an empty slot is always outside the window.
    this.#ring = new Float64Array(this.#limit).fill(Number.NEGATIVE_INFINITY);
  }

  /** The limit this window enforces (0 = off). */
  get limit(): number {
    return this.#limit;
  }

  /** Records and admits the request at `now`, or returns false when the window is full. */
  tryAdmit(now: number): boolean {
    if (this.#limit === 0) return true;
    const oldest = this.#ring[this.#next] ?? Number.NEGATIVE_INFINITY;
    if (now - oldest < this.#windowMs) return false;
    this.#ring[this.#next] = now;
    this.#next = (this.#next + 1) % this.#limit;
    return true;
  }
}
