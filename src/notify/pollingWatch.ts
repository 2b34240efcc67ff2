import type { Logger } from '../logger.js';

/** A watch that looks at stored state now and then: `check()` looks now, `close()` stops the timer. */
export interface PollingWatch {
  check(): Promise<void>;
  close(): void;
}

/**
 * Runs `look` at once and then every `pollMs` (default 5 s), one look at a time per process: a look asked
 * for meanwhile joins the running one. A failed look is logged as a warning saying `what` could not be
 * looked at, and the next one tries again. The timer does not keep the process alive.
 */
export function startPollingWatch(
  look: () => Promise<void>,
  options: { logger: Logger; what: string; pollMs?: number | undefined },
): PollingWatch {
  let running: Promise<void> | undefined;
  const check = (): Promise<void> => {
    running ??= look()
      .catch((error: unknown) =>
        options.logger.warn({ err: error }, `could not look at ${options.what} for notifications`),
      )
      .finally(() => (running = undefined));
    return running;
  };
  void check();
  const timer = setInterval(() => void check(), options.pollMs ?? 5_000);
  timer.unref();
  return {
    check,
    close() {
      clearInterval(timer);
    },
  };
}
