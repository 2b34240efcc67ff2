/** Slots per leading wave (RequestSlots.lead): one at 50, four at 200. */
const LEAD_SLOTS = 50;

/**
 * Requests in flight in one worker process (`--concurrency`), shared by its jobs: each takes as
 * many as it will send at once. Taken first come, first served, so a chunk waiting for several
 * slots is never overtaken for good by smaller ones.
 *
 * A wave whose slots are all free takes them at once (`tryAcquire`). When they are not, waves take
 * turns to lead (`lead`, one per LEAD_SLOTS slots at once): a leading wave claims its records once
 * one slot is free and sends each as the next comes free, so no slot waits idle for a whole wave's
 * worth to be free, nor for the claim's round trip; the next leads once it has all of its slots.
 * Only the leading waves' records wait for a slot marked `sending` (at most `leaders` waves).
 */
export class RequestSlots {
  private free: number;
  private readonly waiting: { n: number; resolve(): void }[] = [];
  private leading = 0;
  private readonly toLead: (() => void)[] = [];
  /** Waves that may lead at once: their claims' round trips overlap. */
  readonly leaders: number;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`request slots must be a positive integer, not ${capacity}`);
    this.free = capacity;
    this.leaders = Math.ceil(capacity / LEAD_SLOTS);
  }

  /** Takes `n` slots now when they are free and no wave leads or waits (true); false takes none. */
  tryAcquire(n: number): boolean {
    if (this.leading > 0 || this.waiting.length > 0 || this.free < n) return false;
    this.free -= n;
    return true;
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

  /**
   * Resolves once the caller's wave leads, first come, first served; the function it resolves with
   * hands the lead on (once: later calls do nothing).
   */
  async lead(): Promise<() => void> {
    if (this.leading < this.leaders) this.leading++;
    // Handed on by a leader: its count goes to this wave.
    else await new Promise<void>((resolve) => this.toLead.push(resolve));
    let led = true;
    return () => {
      if (!led) return;
      led = false;
      const next = this.toLead.shift();
      if (next === undefined) this.leading--;
      else next();
    };
  }

  /** Slots not taken (for tests and metrics). */
  get available(): number {
    return this.free;
  }
}
