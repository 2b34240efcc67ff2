import { join } from 'node:path';
import { main } from '../../src/cli.js';
import { projectRoot } from '../../src/paths.js';

/** What one in-process run of the CLI printed, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  /** stderr, log lines included (they go there, as in the real process). */
  stderr: string;
  /** Both, in the order written. */
  output: string;
}

/**
 * Runs `bulkorder <args>` in this process through `main`, with stdout and stderr captured and
 * the configuration read from `env` alone (not this process's environment): what a spawned CLI
 * does, without a node and tsx start per call. Log lines (pino) are captured into stderr, so a
 * test may read them. Commands that run until a signal (worker, watch without --once,
 * dashboard, simulator) need a real process: test/helpers/cliProcess.ts.
 */
export async function runCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  let output = '';
  const toStderr = {
    write: (text: string) => {
      stderr += text;
      output += text;
    },
  };
  const toStdout = {
    write: (text: string) => {
      stdout += text;
      output += text;
    },
  };
  const code = await main([process.execPath, join(projectRoot, 'src/cli.ts'), ...args], {
    stdout: { isTTY: false, ...toStdout },
    stderr: { isTTY: false, ...toStderr },
    env: { ...env },
    logDestination: toStderr,
  });
  return { code, stdout, stderr, output };
}
