/**
 * What the command modules share: the flag declarations (config, reading, import, parked filters),
 * every command's flag type, and the command context. A leaf for src/commands: it imports no
 * command module, and no command module imports another (test/commands/dependencies.test.ts).
 */
import { Option, type Command } from 'commander';
import type { Config } from '../config.js';
import type { ParkedFilterFlags } from '../deadLetter/parkedFilter.js';
import type { IngestFlags } from '../ingest/ingestFlags.js';
import type { RecordKindName } from '../kinds/recordKind.js';
import type { Logger } from '../logger.js';

/** Sets the process exit code a command's action decided on. */
export type SetExitCode = (code: number) => void;

/** The record kind a command works on: `orders` (top level) or `accounts` (`bulkorder accounts ...`). */
export type { RecordKindName };

/** Options every command that reads configuration accepts. */
export interface ConfigFlags {
  envFile?: string;
  production?: boolean;
}

/** Adds `--env-file` and `--production` to a command. */
export function withConfigFlags(command: Command): Command {
  return command
    .option('--env-file <path>', 'load BULKORDER_* variables from a file (its values win over inherited environment variables; bulkorder config shows the result)')
    .option('--production', 'confirm that BULKORDER_ENV=production is meant (same as BULKORDER_CONFIRM_PRODUCTION=yes)');
}

/** The configuration and logger a command's action runs with. */
export interface CommandContext {
  config: Config;
  logger: Logger;
}

/** Loads the configuration and a logger at its level; announces the environment once. */
export async function loadCommandContext(flags: ConfigFlags, options: { announce?: boolean } = {}): Promise<CommandContext> {
  const [{ loadConfig, announceConfig }, { createLogger }] = await Promise.all([import('../config.js'), import('../logger.js')]);
  const config = loadConfig({
    ...(flags.envFile === undefined ? {} : { envFile: flags.envFile }),
    confirmProduction: flags.production === true,
  });
  const logger = createLogger({ level: config.logLevel });
  if (options.announce !== false) announceConfig(config, logger);
  return { config, logger };
}

/**
 * Declares how an input file is read: `--format`, `--delimiter`, `--encoding`, `--map`, the
 * same for every command that reads one (validate, import, accounts, watch, schedule). The values
 * are checked in one place too, src/ingest/ingestFlags.ts, which also takes aliases (cp1252, utf8).
 */
export function withReadingOptions(command: Command, whose = 'the file', mapNote = ''): Command {
  return command
    .option('--format <format>', `csv | json | ndjson (default: from the extension of ${whose})`)
    .option('--delimiter <char>', 'CSV delimiter: "," ";" "tab" or one other character (default: detected from the header)')
    .option('--encoding <name>', 'utf-8 (default) | windows-1252 | latin1, for Excel "ANSI" exports')
    .option('--map <mapping.json>', `JSON object mapping your column names to ours, e.g. {"Huisnummer": "streetNumber"}${mapNote}`);
}

/** Flags of `import` and `accounts import`. */
export interface ImportFlags extends ConfigFlags, IngestFlags {
  wait?: boolean;
  force?: boolean;
  rejects?: string;
  results?: string;
  timeout?: string;
  maxWait?: string;
}

/** The options `import` and `accounts import` share (`noun`: what the file holds, `order` or `account`). */
export function withImportOptions(command: Command, noun: string): Command {
  return withReadingOptions(command)
    .option('--wait', `follow the batch until every ${noun} is delivered, dead-lettered or held; then write <name>.results.csv`)
    .option('--force', `send again ${noun}s the ledger knows as delivered (explicit override)`)
    .option('--rejects <path>', 'where rejected rows go (default <name>.rejects.csv beside the input)')
    .option('--results <path>', 'with --wait: where results go (default <name>.results.csv beside the input)')
    .option('--max-wait <seconds>', 'with --wait: give up after this long, write the results so far and exit 5 with the reason (default 21600, 6 hours; the batch goes on)')
    .option('--timeout <seconds>', 'alias of --max-wait');
}

/** What `validate` and `accounts validate` take. */
export interface ValidateFlags extends IngestFlags {
  out?: string;
  json?: boolean;
}

/** Flags of `status` and `accounts status`. */
export interface StatusFlags extends ConfigFlags {
  json?: boolean;
  limit?: string;
}

/** The `dead-letters` subcommands. */
export type DeadLetterAction = 'list' | 'show' | 'export' | 'retry' | 'purge';

/** Flags of every `dead-letters` subcommand. */
export interface DeadLetterFlags extends ConfigFlags, ParkedFilterFlags {
  /** Deprecated alias of the `accounts` subcommand tree. */
  accounts?: boolean;
  json?: boolean;
  limit?: string;
  out?: string;
  delimiter?: string;
  all?: boolean;
  wait?: boolean;
  timeout?: string;
}

/** The `review` subcommands. */
export type ReviewAction = 'list' | 'show' | 'release' | 'resolve';

/** Flags of every `review` subcommand. */
export interface ReviewFlags extends ConfigFlags, ParkedFilterFlags {
  /** Deprecated alias of the `accounts` subcommand tree. */
  accounts?: boolean;
  json?: boolean;
  limit?: string;
  all?: boolean;
  wait?: boolean;
  timeout?: string;
  delivered?: boolean;
  remoteId?: string;
  by?: string;
  note?: string;
}

/** Adds the filter flags `list`, `export`, `retry`, `purge`, `release` and `resolve` share. */
export function withParkedFilters(command: Command, noun: string): Command {
  return command
    .option('--batch <id>', `only ${noun}s parked by this batch`)
    .option('--status <http>', "only this HTTP status (e.g. 422), or 'none' (no answer)")
    .option('--code <code>', 'only this error code (e.g. PRODUCT_UNKNOWN)')
    .option('--older-than <age>', 'only parked at least this long ago: 30m, 12h, 7d, 2w')
    .option('--newer-than <age>', 'only parked at most this long ago')
    .addOption(accountsAlias());
}

/**
 * `--accounts`: the old spelling of `bulkorder accounts dead-letters|review ...`, kept hidden so
 * scripts written for it go on working (deprecated; see CHANGELOG).
 */
export function accountsAlias(): Option {
  return new Option('--accounts', 'deprecated: use `bulkorder accounts dead-letters|review ...`').hideHelp();
}

/** The kind a dead-letters or review action works on: its place in the tree, or the deprecated `--accounts`. */
export function chosenKind(kind: RecordKindName, flags: { accounts?: boolean }): RecordKindName {
  return flags.accounts === true ? 'accounts' : kind;
}

/** Flags of `bulkorder worker`. */
export interface WorkerFlags extends ConfigFlags {
  concurrency?: string;
  httpPort?: string;
  httpHost?: string;
}

/** Flags of `bulkorder watch`. */
export interface WatchFlags extends ConfigFlags, IngestFlags {
  stable?: string;
  poll?: string;
  maxSize?: string;
  maxActive?: string;
  once?: boolean;
  deliver?: boolean;
}

/** The `schedule` subcommands. */
export type ScheduleAction = 'set' | 'list' | 'remove';

/** Flags of every `schedule` subcommand. */
export interface ScheduleFlags extends ConfigFlags, IngestFlags {
  cron?: string;
  tz?: string;
  source?: string;
  json?: boolean;
}

/** Flags of `bulkorder demo`. */
export interface DemoFlags {
  out?: string;
  keep?: boolean;
}

/** Flags of `bulkorder login`. */
export interface LoginFlags extends ConfigFlags {
  email?: string;
  company?: string;
}

/** `bulkorder dashboard`. */
export interface DashboardFlags extends ConfigFlags {
  host?: string;
  port?: string;
  readOnly?: boolean;
}
