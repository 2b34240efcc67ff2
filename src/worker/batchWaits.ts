import { waitVerdict, type BatchView, type BatchWait } from '../batches/putBackChunks.js';

interface Waiter {
  wait: BatchWait;
  untilMs: number;
  stopping: (() => boolean) | undefined;
  resolve(free: boolean): void;
}

interface Watch {
  waiters: Set<Waiter>;
  timer: NodeJS.Timeout;
  looking: boolean;
  /** Poked while a look was under way (which may have read Redis before the change): look again after it. */
  again: boolean;
}

/**
 * Chunks a worker process holds while their batch keeps them back for a moment (its file still
 * read, its canary judging it): each waits in place, holding its job but no request slot, instead of
 * resting delayed (no put-back, no promote, and no other chunk of the batch taken only to be put
 * back: the worker's job slots are the waiting ones). One look per batch and `everyMs` for all of
 * the process's waiters (`look`: one round trip); `poke` looks at once (this process saw the canary
 * pass). A waiter ends `true` once it may ask the gate again, `false` after its `maxMs`, when the
 * batch is held, or once `stopping` says so: its chunk then rests delayed as before.
 */
export class BatchWaits {
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly look: (batchId: string) => Promise<BatchView>,
    private readonly everyMs: number,
  ) {}

  until(batchId: string, wait: BatchWait, options: { maxMs: number; stopping?: () => boolean }): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter = { wait, untilMs: performance.now() + options.maxMs, stopping: options.stopping, resolve };
      this.watchOf(batchId).waiters.add(waiter);
    });
  }

  /** Looks at the batch now, if any chunk waits for it in this process. */
  poke(batchId: string): void {
    const watch = this.watches.get(batchId);
    if (watch !== undefined) void this.tick(batchId, watch);
  }

  private watchOf(batchId: string): Watch {
    const known = this.watches.get(batchId);
    if (known !== undefined) return known;
    const watch: Watch = {
      waiters: new Set(),
      timer: setInterval(() => void this.tick(batchId, watch), this.everyMs),
      looking: false,
      again: false,
    };
    watch.timer.unref();
    this.watches.set(batchId, watch);
    return watch;
  }

  private async tick(batchId: string, watch: Watch): Promise<void> {
    if (watch.looking) {
      watch.again = true;
      return;
    }
    watch.looking = true;
    watch.again = false;
    // A look that fails (Redis away) keeps everyone waiting until their time is up.
    const view = await this.look(batchId).catch(() => undefined);
    watch.looking = false;
    const now = performance.now();
    for (const waiter of watch.waiters) {
      const verdict = view === undefined ? 'wait' : waitVerdict(view, waiter.wait);
      if (verdict === 'wait' && now < waiter.untilMs && waiter.stopping?.() !== true) continue;
      watch.waiters.delete(waiter);
      waiter.resolve(verdict === 'go');
    }
    if (watch.waiters.size === 0 && this.watches.get(batchId) === watch) {
      clearInterval(watch.timer);
      this.watches.delete(batchId);
    } else if (watch.again) void this.tick(batchId, watch);
  }
}
