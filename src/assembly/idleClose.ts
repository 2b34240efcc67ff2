import { setTimeout as sleep } from 'node:timers/promises';
import type { Processor } from 'bullmq';

/**
 * How long BullMQ's `Worker.close()` may take once no job of this process runs: it disconnects its blocking
 * connection and quits, normally well under a second. Past that it waits only on that blocking connection,
 * which a Redis Cluster failover can leave wedged (BullMQ issues 4138 and 4656), and the worker stops without it:
 * no job is left to finish, and the process ends after the command (src/commands/stopPolicy.ts).
 */
export const IDLE_CLOSE_MS = 5_000;

/** `processor`, counting the jobs it is running (`count`) and those it started so far (`started`). */
export function countRuns<D, R>(
  processor: Processor<D, R>,
): { processor: Processor<D, R>; count: () => number; started: () => number } {
  let jobs = 0;
  let started = 0;
  return {
    async processor(...args) {
      jobs++;
      started++;
      try {
        return await processor(...args);
      } finally {
        jobs--;
      }
    },
    count: () => jobs,
    started: () => started,
  };
}

/**
 * Resolves `idle` {@link IDLE_CLOSE_MS} after `from` settled and `count()` came to 0, for a race beside
 * BullMQ's close; `stop()` once the race is decided. Its timers are unref'd: they keep no process alive.
 */
export function whenIdle(count: () => number, from: Promise<unknown>): { idle: Promise<'idle'>; stop(): void } {
  let stopped = false;
  const idle = (async () => {
    await from.catch(() => undefined);
    while (count() > 0 && !stopped) await sleep(100, undefined, { ref: false });
    await sleep(IDLE_CLOSE_MS, undefined, { ref: false });
    return 'idle' as const;
  })();
  return {
    idle,
    stop() {
      stopped = true;
    },
  };
}
