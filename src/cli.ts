#!/usr/bin/env node
/**
 * The one entry point and the one exit point of the CLI. Each command lives in
 * src/commands/<name>.ts and exports `register(program)`: declaring options is cheap,
 * and a command's heavy modules (BullMQ, zod schemas, undici) are imported lazily in
 * its action, so `bulkorder --help` starts fast. Commands return an exit code or throw;
 * `main` maps thrown errors to the documented exit codes.
 */
import { Command, CommanderError } from 'commander';
import { EXIT_CODE_MEANINGS, ExitCode, isBulkorderError } from './errors.js';
import { registerCommands } from './commands/index.js';
import { HELP_WIDTH, withExamples, withFlagHint, type CommandIo } from './commands/options.js';
import { isRedisConnectionError } from './redisErrors.js';
import type { TextSink } from './textSink.js';

/** What `main` runs against: the process's own streams and environment unless a caller (a test) gives others. */
export type CliIo = Omit<CommandIo, 'setExitCode'>;

/**
 * Runs one command line (`argv` as process.argv: node, script, args...) and returns its exit code.
 * Output, configuration and log lines go through `io`, so `main` can run in-process many times.
 */
export async function main(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const stderr = io.stderr ?? process.stderr;
  const program = buildProgram(await packageVersion(), {
    stdout: io.stdout ?? process.stdout,
    stderr,
    env: io.env ?? process.env,
    ...(io.logDestination === undefined ? {} : { logDestination: io.logDestination }),
    setExitCode: (code) => {
      exitCode = code;
    },
  });
  try {
    await program.parseAsync(argv, { from: 'node' });
  } catch (error) {
    return exitCodeFor(error, stderr);
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
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text), outputError: (text, write) => write(withFlagHint(text)) });
  withExamples(
    program,
    ['bulkorder validate orders.csv', 'bulkorder worker --config-file .env &', 'bulkorder import orders.csv --wait --config-file .env', 'bulkorder status'],
    `Exit codes: ${Object.entries(EXIT_CODE_MEANINGS).map(([code, meaning]) => `${code} ${meaning}`).join(', ')}.`,
    'See README.md for configuration (BULKORDER_* variables) and file formats; every command has --help with examples.',
  );
  registerCommands(program, io);
  return program;
}

function exitCodeFor(error: unknown, stderr: TextSink): number {
  if (error instanceof CommanderError) {
    // --help and --version end through exitOverride with exit code 0.
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (isBulkorderError(error)) {
    stderr.write(`bulkorder: ${error.message}\n`);
    return error.exitCode;
  }
  if (isRedisConnectionError(error)) {
    stderr.write(
      `bulkorder: the connection to Redis was lost (${(error as Error).message}). Run the same command again once Redis ` +
        `answers: what was done stays done, and nothing is queued or sent twice.\n`,
    );
    return ExitCode.infrastructure;
  }
  stderr.write(`bulkorder: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return ExitCode.internal;
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

// Run only when executed (directly or through the npm bin symlink), not when imported by tests.
const { realpathSync } = await import('node:fs');
const { fileURLToPath } = await import('node:url');
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv);
}
