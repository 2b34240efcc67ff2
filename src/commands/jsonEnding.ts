/**
 * `--json` promises one object on stdout, whatever ends the run. The commands print theirs (their
 * report, or a refusal through withJsonRefusal); this covers what they cannot: an error no command
 * caught (Redis lost mid-run, an internal error, a usage error commander found) and a signal
 * (src/commands/stopPolicy.ts).
 */
import { exitMeaning } from '../errors.js';
import type { TextSink } from '../textSink.js';
import { jsonText } from './options.js';

/** Why a `--json` run ended without its report; the same `refused` shape withJsonRefusal prints. */
export interface JsonRefusal {
  code: string;
  message: string;
  exitCode: number;
}

export interface JsonEnding {
  /** The stdout to give the commands: what they write there counts as the run's object. */
  stdout: TextSink;
  /** Prints `{refused, exitCode, exitMeaning}` unless the run already wrote on stdout (never a second object). */
  end(refusal: JsonRefusal): void;
}

/** Watches what goes to `stdout` from here on. */
export function watchJsonStdout(stdout: TextSink): JsonEnding {
  let written = false;
  return {
    stdout: {
      write(text) {
        written = true;
        return stdout.write(text);
      },
      ...(stdout.isTTY === undefined ? {} : { isTTY: stdout.isTTY }),
    },
    end(refusal) {
      if (written) return;
      written = true;
      stdout.write(
        jsonText({ refused: refusal, exitCode: refusal.exitCode, exitMeaning: exitMeaning(refusal.exitCode) }),
      );
    },
  };
}
