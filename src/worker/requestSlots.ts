/**
 * Requests in flight in one worker process (`--concurrency`), shared by its jobs: each takes as
 * many as it will send at once. Taken first come, first served, so a chunk waiting for several
 * slots is never overtaken for good by smaller ones.
 */
export class RequestSlots {
  private free: number;
  private readonly waiting: { n: number; resolve(): void }[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`request slots must be a positive integer, not ${capacity}`);
    this.free = capacity;
  }

  /** Resolves once `n` slots (at most `capacity`) are this caller's; give them back with `release`. */
  acquire(n: number): Promise<void> {
    const want = Math.min(n, this.capacity);
    if (want <= 0) return Promise.resolve();
    if (this.waiting.length === 0 && this.free >= want) {
      this.free -= want;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push({ n: want, resolve }));
  }

  release(n: number): void {
    if (n <= 0) return;
    this.free = Math.min(this.capacity, this.free + n);
    for (let next = this.waiting[0]; next !== undefined && this.free >= next.n; next = this.waiting[0]) {
      this.waiting.shift();
      this.free -= next.n;
      next.resolve();
    }
  }

  /** Slots not taken (for tests and metrics). */
  get available(): number {
    return this.free;
  }
}
