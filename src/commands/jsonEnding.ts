/**
 * `--json` promises one object on stdout, whatever ends the run. The commands print theirs (their
 * report, or a refusal through withJsonRefusal); this covers what they cannot: an error no command
 * caught (Redis lost mid-run, an internal error, a usage error commander found) and a signal.
 */
import { exitMeaning } from '../errors.js';
import { jsonText } from './options.js';

/** Why a `--json` run ended without its report; the same `refused` shape withJsonRefusal prints. */
export interface JsonRefusal {
  code: string;
  message: string;
  exitCode: number;
}

export interface JsonEnding {
  /** Prints `{refused, exitCode, exitMeaning}` unless the run already wrote on stdout (never a second object). */
  end(refusal: JsonRefusal): void;
}

/**
 * Watches stdout from here on: anything written counts as the run's object. Wrapping the stream's
 * write is the one place every command's output passes, however it prints.
 */
export function watchJsonStdout(): JsonEnding {
  let written = false;
  const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
  process.stdout.write = ((...args: unknown[]) => {
    written = true;
    return write(...args);
  }) as typeof process.stdout.write;
  return {
    end(refusal) {
      if (written) return;
      process.stdout.write(jsonText({ refused: refusal, exitCode: refusal.exitCode, exitMeaning: exitMeaning(refusal.exitCode) }));
    },
  };
}

/**
 * SIGTERM/SIGINT during a command that does not handle signals itself (import): the object says it
 * was interrupted, then the process exits as the default would (128 + signal number). A spill
 * folder's own handler (src/ingest/spillDir.ts) still cleans up: it runs on exit as well.
 */
export function endJsonOnSignal(ending: JsonEnding): void {
  for (const [signal, number] of [['SIGTERM', 15], ['SIGINT', 2]] as const) {
    process.once(signal, () => {
      const exitCode = 128 + number;
      ending.end({ code: 'INTERRUPTED', message: `stopped by ${signal} before the end; run the same command again to finish (nothing is queued or sent twice)`, exitCode });
      process.exit(exitCode);
    });
  }
}
