/**
 * The CLI's one stop policy: what SIGTERM and SIGINT do to every command, whatever Redis or the
 * API does meanwhile. `main` installs it before any command runs, so a signal that arrives while a
 * command waits for Redis is handled like any other.
 *
 * - A command that stops gracefully (worker, dashboard, watch, simulator) registers `graceful`: the
 *   first signal asks it to stop, and the process ends `graceMs` later whatever is still open
 *   (a connection retrying a Redis that is gone, a close that never answers).
 * - Every other command (import, validate, dead-letters retry --wait, ...) ends at once, as the
 *   default signal action would: what was done stays done, and running it again finishes it.
 * - A second signal ends the process at once.
 *
 * An end forced here exits 128 + the signal's number (143 SIGTERM, 130 SIGINT) and, with --json,
 * prints the one `{"refused": {"code": "INTERRUPTED"}}` object unless the command already printed
 * its own. A graceful stop returns the command's own exit code (0 for a daemon told to stop;
 * 128 + n from a command whose work the signal cut short, such as `watch --once`).
 */
import type { TextSink } from '../textSink.js';
import { signalExitCode, type StopPolicy, type StopSignal } from './options.js';

/** Where a forced end's `--json` object goes (src/commands/jsonEnding.ts: printed unless the run printed its own). */
interface Ending {
  end(refusal: { code: string; message: string; exitCode: number }): void;
}

interface Installed {
  policy: StopPolicy;
  /** Removes the signal handlers and a pending forced end (main may run again in one process: tests). */
  dispose(): void;
}

/** Listens for SIGTERM and SIGINT for one run of `main`. */
export function installStopPolicy(options: { ending: Ending | undefined; stderr: TextSink }): Installed {
  let stoppedBy: StopSignal | undefined;
  let stopHandler: { stop: (signal: StopSignal) => void; graceMs: number } | undefined;
  let forcedEnd: NodeJS.Timeout | undefined;

  const endNow = (signal: StopSignal, why: string): void => {
    const exitCode = signalExitCode(signal);
    const message = `stopped by ${signal} ${why}; run the same command again to finish (what was done stays done, nothing is queued or sent twice)`;
    options.stderr.write(`bulkorder: ${message}\n`);
    options.ending?.end({ code: 'INTERRUPTED', message, exitCode });
    // Pipes and files take stdout synchronously on Linux: the object is out before the exit.
    process.exit(exitCode);
  };

  const onSignal = (signal: StopSignal): void => {
    if (stoppedBy !== undefined || stopHandler === undefined) {
      endNow(signal, stoppedBy === undefined ? 'before the end' : `(a second signal, after ${stoppedBy})`);
      return;
    }
    stoppedBy = signal;
    const { stop, graceMs } = stopHandler;
    forcedEnd = setTimeout(() => endNow(signal, `and not stopped within its grace period (${graceMs} ms)`), graceMs);
    // Unref'd: a command that ends in time exits without waiting for it.
    forcedEnd.unref();
    stop(signal);
  };
  const handlers = (['SIGTERM', 'SIGINT'] as const).map((signal) => {
    const handler = (): void => onSignal(signal);
    process.on(signal, handler);
    return [signal, handler] as const;
  });

  return {
    policy: {
      graceful(stop, graceMs) {
        const entry = { stop, graceMs };
        stopHandler = entry;
        return () => {
          if (stopHandler === entry) stopHandler = undefined;
        };
      },
      get stoppedBy() {
        return stoppedBy;
      },
    },
    dispose() {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      if (forcedEnd !== undefined) clearTimeout(forcedEnd);
    },
  };
}

/**
 * In the CLI process, once `main` returned: a handle still open (a connection retrying a Redis
 * that is gone, a socket the API never closed) must not keep a finished run alive, where a
 * signal would then find no handler. The process exits with `exitCode` shortly after, unless it
 * ends cleanly first (the timer is unref'd), and at once on a signal meanwhile: the run's answer
 * (and its --json object) is already out, so the exit code stays the run's own.
 */
export function endAfterRun(exitCode: number): void {
  setTimeout(() => process.exit(exitCode), LINGER_MS).unref();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(exitCode));
}

/** How long a finished run may linger (log lines flushed, sockets closed) before it is ended. */
const LINGER_MS = 2_000;
