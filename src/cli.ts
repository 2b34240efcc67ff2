#!/usr/bin/env node
/**
 * The one entry point and the one exit point of the CLI. Each command lives in
 * src/commands/<name>.ts and exports `register(program)`: declaring options is cheap,
 * and a command's heavy modules (BullMQ, zod schemas, undici) are imported lazily in
 * its action, so `bulkorder --help` starts fast. Commands return an exit code or throw;
 * `main` maps thrown errors to the documented exit codes.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { EXIT_CODE_MEANINGS, ExitCode, isBulkorderError } from './errors.js';
import { registerCommands } from './commands/index.js';
import { stopTracing } from './tracing/tracing.js';
import { HELP_WIDTH, withExamples, withFlagHint, type CommandIo } from './commands/options.js';
import { isRedisConnectionError, noPermissionReply, outOfMemoryReply } from './redisErrors.js';
import { watchJsonStdout, type JsonEnding } from './commands/jsonEnding.js';
import { endAfterRun, installStopPolicy } from './commands/stopPolicy.js';
import type { TextSink } from './textSink.js';
import { tuneHeapFor } from './heapSettings.js';

/** What `main` runs against: the process's own streams and environment unless a caller (a test) gives others. */
export type CliIo = Omit<CommandIo, 'setExitCode'>;

/**
 * Runs one command line (`argv` as process.argv: node, script, args...) and returns its exit code.
 * Output, configuration and log lines go through `io`, so `main` can run in-process many times.
 */
export async function main(
  argv: readonly string[],
  io: Partial<CliIo> = {},
  options: { tuneHeap?: boolean } = {},
): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const stderr = io.stderr ?? process.stderr;
  const stdout = io.stdout ?? process.stdout;
  // Read from argv, not the parsed flags: a usage error ends the run before any flag is parsed.
  const operands = argv.indexOf('--');
  const ending: JsonEnding | undefined = (operands < 0 ? argv : argv.slice(0, operands)).includes('--json')
    ? watchJsonStdout(stdout)
    : undefined;
  const env = io.env ?? process.env;
  // Before any command runs: a signal while a command waits for Redis is handled like any other.
  const stopping = installStopPolicy({ ending, stderr });
  const program = buildProgram(await packageVersion(), {
    stdout: ending?.stdout ?? stdout,
    stderr,
    env,
    stop: stopping.policy,
    ...(io.logDestination === undefined ? {} : { logDestination: io.logDestination }),
    setExitCode: (code) => {
      exitCode = code;
    },
  });
  if (options.tuneHeap === true) {
    // Once the command is known, before its action reads anything (src/heapSettings.ts).
    program.hook('preAction', (_program, action) => {
      const nodeFlags = [...process.execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
      tuneHeapFor(action.name(), { delivers: action.opts().deliver === true }, nodeFlags);
    });
  }
  try {
    await program.parseAsync(argv, { from: 'node' });
  } catch (error) {
    const refusal = refusalFor(error, stderr);
    // --help and --version (exit 0) printed their text: that is the answer.
    if (refusal.exitCode !== ExitCode.ok) ending?.end(refusal);
    exitCode = refusal.exitCode;
  } finally {
    stopping.dispose();
    // Spans still buffered go out before the process ends (a no-op without OTEL_*: nothing was loaded).
    await stopTracing().catch(() => undefined);
  }
  return exitCode;
}

/**
 * The whole command tree, as `main` runs it (tests walk it to check every help text). Help is
 * laid out for HELP_WIDTH columns in this one place: subcommands inherit the setting, and
 * `minWidthToWrap` is lowered so option texts beside long flags are wrapped too.
 */
export function buildProgram(version: string, io: CommandIo): Command {
  const program = new Command()
    .name('bulkorder')
    .description(
      'Turns order files (CSV, JSON, NDJSON) into orders on the Business API, exactly once. ' +
        'Rows are validated, queued in Redis (BullMQ) and posted by workers sharing one OAuth2 token.',
    )
    .version(version, '-V, --version')
    .configureHelp({ helpWidth: HELP_WIDTH, minWidthToWrap: 24 })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(withFlagHint(text)),
    });
  withExamples(
    program,
    [
      'bulkorder validate orders.csv',
      'bulkorder worker --config-file .env &',
      'bulkorder import orders.csv --wait --config-file .env',
      'bulkorder status',
    ],
    `Exit codes: ${Object.entries(EXIT_CODE_MEANINGS)
      .map(([code, meaning]) => `${code} ${meaning}`)
      .join(', ')}.`,
    'See README.md for configuration (BULKORDER_* variables) and file formats; every command has --help with examples.',
    'Every code bulkorder shows (refusals, rejected rows, notes, dead-letter and held causes), what it means and what to do: docs/errors.md.',
  );
  registerCommands(program, io);
  return program;
}

/** Says a thrown error on stderr; returns its exit code, with the code and message `--json` prints. */
function refusalFor(error: unknown, stderr: TextSink): { code: string; message: string; exitCode: number } {
  if (error instanceof CommanderError) {
    // --help and --version end through exitOverride with exit code 0 (help went to stdout: no second object).
    return { code: error.code, message: error.message, exitCode: error.exitCode === 0 ? ExitCode.ok : ExitCode.usage };
  }
  if (isBulkorderError(error)) {
    stderr.write(`bulkorder: ${error.message}\n`);
    return { code: error.code, message: error.message, exitCode: error.exitCode };
  }
  const oom = outOfMemoryReply(error);
  if (oom !== undefined) {
    const message =
      `Redis is out of memory and refuses writes (${oom}). Give it more memory (maxmemory) ` +
      `or free some, then run the same command again: what was done stays done, and nothing is queued or sent twice.`;
    stderr.write(`bulkorder: ${message}\n`);
    return { code: 'REDIS_UNAVAILABLE', message, exitCode: ExitCode.infrastructure };
  }
  const noPermission = noPermissionReply(error);
  if (noPermission !== undefined) {
    const message =
      `REDIS_URL: Redis refused a command or key to its user (${noPermission}). Give the user the ACL that README's ` +
      `"Redis permissions" lists (its key pattern must cover BULKORDER_REDIS_PREFIX), then run the same command again: ` +
      `what was done stays done, and nothing is queued or sent twice.`;
    stderr.write(`bulkorder: ${message}\n`);
    return { code: 'REDIS_NO_PERMISSION', message, exitCode: ExitCode.usage };
  }
  if (isRedisConnectionError(error)) {
    const message =
      `the connection to Redis was lost (${(error as Error).message}). Run the same command again once Redis ` +
      `answers: what was done stays done, and nothing is queued or sent twice.`;
    stderr.write(`bulkorder: ${message}\n`);
    return { code: 'REDIS_UNAVAILABLE', message, exitCode: ExitCode.infrastructure };
  }
  stderr.write(
    `bulkorder: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return {
    code: 'INTERNAL',
    message: error instanceof Error ? error.message : String(error),
    exitCode: ExitCode.internal,
  };
}

async function packageVersion(): Promise<string> {
  const [{ readFile }, { join }, { projectRoot }] = await Promise.all([
    import('node:fs/promises'),
    import('node:path'),
    import('./paths.js'),
  ]);
  const pkg = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

let commandLineRun = false;

/**
 * Runs this process's command line and ends the process after it (src/bin/command.ts, or this file run by node);
 * once: the bundle run by node itself (`node dist/bin/bulkorder.cjs`) is both.
 */
export function runCommandLine(): void {
  if (commandLineRun) return;
  commandLineRun = true;
  void main(process.argv, {}, { tuneHeap: true }).then((exitCode) => {
    process.exitCode = exitCode;
    endAfterRun(exitCode);
  });
}

// Run only when executed (directly, as under tsx), not when imported by tests or the bundle's entry.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) runCommandLine();
