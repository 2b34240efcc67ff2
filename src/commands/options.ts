/**
 * What the command modules share: the flag declarations (config, reading, import, parked filters),
 * every command's flag type, and the command context. A leaf for src/commands: it imports no
 * command module, and no command module imports another (test/commands/dependencies.test.ts).
 */
import { userInfo } from 'node:os';
import { Option, type Command } from 'commander';
import type { Config } from '../config.js';
import { exitMeaning, isBulkorderError, UsageError } from '../errors.js';
import { isEmptyFilter, type ParkedFilter } from '../deadLetter/parkedFilter.js';
import type { IngestFlags } from '../ingest/ingestFlags.js';
import type { RecordKindName } from '../kinds/recordKind.js';
import type { Logger } from '../logger.js';
import type { DestinationStream } from 'pino';
import type { TextSink } from '../textSink.js';

/** Default ports of the two servers a person starts by hand: different, so both run side by side on one machine. */
export const DEFAULT_PORTS = { dashboard: 8080, simulator: 8081 } as const;

/**
 * Flags people reach for that we name otherwise: commander suggests only near spellings, and
 * `--config` is too far from `--config-file` for it.
 */
const FLAG_HINTS: Readonly<Record<string, string>> = {
  '--config': '--config-file',
  '--conf': '--config-file',
  '--env': '--config-file',
  '--dotenv': '--config-file',
};

/** Commander's error text with our hint added ("did you mean --config-file?") where it has none. */
export function withFlagHint(message: string): string {
  const flag = /unknown option '([^'=]+)/.exec(message)?.[1];
  const hint = flag === undefined ? undefined : FLAG_HINTS[flag];
  if (hint === undefined || /did you mean/i.test(message)) return message;
  return message.replace(/\n?$/, ` (Did you mean ${hint}?)\n`);
}

/** Help reads at 80 columns whatever the terminal: src/cli.ts sets it for every command, and the text after the options is wrapped to it here. */
export const HELP_WIDTH = 80;

/**
 * The text after a command's options, laid out the same way for every command: an "Examples:"
 * block (one command line each, continued with ` \` where longer than HELP_WIDTH, never inside
 * quotes) and then notes such as "Exit codes: ..." wrapped as paragraphs. Commander prints this
 * text as it is, so it is wrapped here; descriptions and option texts are wrapped by commander
 * and so carry no hard line breaks of their own.
 */
export function withExamples(command: Command, examples: readonly string[], ...notes: string[]): Command {
  const lines = [
    '',
    'Examples:',
    ...examples.flatMap((example) => exampleLines(example)),
    ...notes.flatMap((note) => ['', ...wrapText(note, HELP_WIDTH)]),
  ];
  return command.addHelpText('after', lines.join('\n'));
}

/** One example, `  `-indented; continued on `    `-indented lines, each ending in ` \`, when too long. */
function exampleLines(example: string): string[] {
  // A flag stays on one line with its value: `--source "/srv/in/*.csv"`.
  const words = example.match(/>\s*\S+|--\S+ (?:"[^"]*"|'[^']*'|[^-\s>#]\S*)|"[^"]*"|'[^']*'|#.*$|\S+/g) ?? [];
  const lines: string[] = [];
  let line = '  ';
  for (const word of words) {
    const candidate = line.trim() === '' ? line + word : `${line} ${word}`;
    if (candidate.length <= HELP_WIDTH - 2 || line.trim() === '') line = candidate;
    else {
      lines.push(`${line} \\`);
      line = `    ${word}`;
    }
  }
  lines.push(line);
  return lines;
}

/** Words of a paragraph in lines of at most `width` characters. */
function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Sets the process exit code a command's action decided on. */
export type SetExitCode = (code: number) => void;

export type { TextSink };

/**
 * What `main` gives every command: where it prints, the environment configuration is read from,
 * where log lines go, and where its exit code goes. Commands touch none of process.stdout,
 * process.stderr or process.env themselves, so a test can run `main` in-process with its own.
 */
export interface CommandIo {
  stdout: TextSink;
  stderr: TextSink;
  env: Readonly<Record<string, string | undefined>>;
  /** Log lines; default pino's own stderr destination (or pretty lines on a terminal). */
  logDestination?: DestinationStream;
  setExitCode: SetExitCode;
  /** The run's stop policy (src/commands/stopPolicy.ts); none when a test runs a command in-process. */
  stop?: StopPolicy;
}

/** The record kind a command works on: `orders` (top level) or `accounts` (`bulkorder accounts ...`). */
export type { RecordKindName };

/** Options every command that reads configuration accepts. */
export interface ConfigFlags {
  configFile?: string;
  logFormat?: string;
  /** The former name of --config-file, still accepted (hidden from help). */
  envFile?: string;
  production?: boolean;
}

/**
 * Adds `--config-file` and `--production` to a command. The file option is not called
 * `--env-file`: Node 20 reads that flag itself even after the script name (nodejs/node#54232)
 * and exits 9 with "node: <file>: not found" before any of our code runs. `--env-file` still
 * works when the file exists (Node and we then read the same file), hidden from help.
 */
export function withConfigFlags(command: Command): Command {
  return command
    .option(
      '--config-file <path>',
      'load BULKORDER_* variables from a dotenv file (its values win over inherited environment variables; bulkorder config shows the result)',
    )
    .addOption(new Option('--env-file <path>', 'former name of --config-file').hideHelp())
    .addOption(
      new Option(
        '--log-format <format>',
        'log lines: pretty (readable), json, or auto: pretty on a terminal, JSON when piped (default: LOG_FORMAT or auto)',
      ).choices(['auto', 'json', 'pretty']),
    )
    .option(
      '--production',
      'confirm that BULKORDER_ENV=production is meant (same as BULKORDER_CONFIRM_PRODUCTION=yes)',
    );
}

/** `--json` of a command: `what` as one JSON object on stdout; progress, logs and notes stay on stderr. */
export function withJsonOption(command: Command, what: string): Command {
  return command.option(
    '--json',
    `print ${what} as one JSON object on stdout, with exitCode and exitMeaning (progress and notes go to stderr)`,
  );
}

/** What a command that changes something tells: lines for a person, the same facts for a script, its exit code. */
export interface CommandReport {
  text: string;
  json: Record<string, unknown>;
  exitCode: number;
}

/** One JSON document the way every `--json` prints it: indented, one trailing newline. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/** Prints a report on stdout, as text or (--json) as one JSON object ending in its exit code and what it means; returns the exit code. */
export function printReport(stdout: TextSink, report: CommandReport, json: boolean): number {
  stdout.write(
    json
      ? jsonText({ ...report.json, exitCode: report.exitCode, exitMeaning: exitMeaning(report.exitCode) })
      : report.text,
  );
  return report.exitCode;
}

/**
 * Runs a command's action. With --json, a typed error (file refused, usage, Redis unavailable) is
 * printed on stdout too, as `{...context, refused: {code, message, exitCode, details}, exitCode,
 * exitMeaning}`, so a script reading stdout always gets one object; the error is then rethrown
 * and cli.ts says it on stderr and exits with its code, as without --json.
 */
export async function withJsonRefusal(
  stdout: TextSink,
  json: boolean,
  context: Record<string, unknown>,
  run: () => Promise<number>,
): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (json && isBulkorderError(error)) {
      const refused = {
        code: error.code,
        message: error.message,
        exitCode: error.exitCode,
        ...(error.details === undefined ? {} : { details: error.details }),
      };
      stdout.write(
        jsonText({ ...context, refused, exitCode: error.exitCode, exitMeaning: exitMeaning(error.exitCode) }),
      );
    }
    throw error;
  }
}

/** The configuration, logger and output a command's action runs with. */
export interface CommandContext {
  config: Config;
  logger: Logger;
  stdout: TextSink;
  stderr: TextSink;
  /** What SIGTERM/SIGINT do to this run: a command that stops gracefully registers here. */
  stop: StopPolicy;
}

/** Loads the configuration (from `io.env`) and a logger at its level; announces the environment once. */
export async function loadCommandContext(
  flags: ConfigFlags,
  io: CommandIo,
  options: { announce?: boolean } = {},
): Promise<CommandContext> {
  const [{ loadConfig, announceConfig }, { createLogger }] = await Promise.all([
    import('../config.js'),
    import('../logger.js'),
  ]);
  const file = flags.configFile ?? flags.envFile;
  const config = loadConfig({
    env: io.env,
    ...(file === undefined
      ? {}
      : { envFile: file, envFileFlag: flags.configFile === undefined ? '--env-file' : '--config-file' }),
    confirmProduction: flags.production === true,
  });
  const format =
    flags.logFormat === 'json' || flags.logFormat === 'pretty' || flags.logFormat === 'auto'
      ? flags.logFormat
      : config.logFormat;
  const logger = createLogger({
    level: config.logLevel,
    format,
    ...(io.logDestination === undefined ? {} : { destination: io.logDestination }),
  });
  if (options.announce !== false) announceConfig(config, logger);
  return { config, logger, stdout: io.stdout, stderr: io.stderr, stop: io.stop ?? NO_SIGNALS };
}

/**
 * The action of a command whose own half loads only when it runs: loads that half (`load`) and the
 * command context at once, runs `run` and sets the exit code it returns. `announce: false` leaves the
 * environment unsaid; with `json`, a typed refusal is printed on stdout too, with `said` (withJsonRefusal).
 */
export async function runAction<M>(
  io: CommandIo,
  flags: ConfigFlags,
  how: { load: () => Promise<M>; announce?: boolean; json?: boolean; said?: Record<string, unknown> },
  run: (loaded: M, ctx: CommandContext) => Promise<number> | number,
): Promise<void> {
  io.setExitCode(
    await withJsonRefusal(io.stdout, how.json === true, how.said ?? {}, async () => {
      const [loaded, ctx] = await Promise.all([
        how.load(),
        loadCommandContext(flags, io, { announce: how.announce !== false }),
      ]);
      return run(loaded, ctx);
    }),
  );
}

/**
 * Declares how an input file is read: `--format`, `--delimiter`, `--encoding`, `--map`, the
 * same for every command that reads one (validate, import, accounts, watch, schedule). The values
 * are checked in one place too, src/ingest/ingestFlags.ts, which also takes aliases (cp1252, utf8).
 */
export function withReadingOptions(
  command: Command,
  whose = 'the file',
  mapNote = '',
  kind: 'orders' | 'accounts' = 'orders',
): Command {
  const orders = kind === 'orders';
  // Each kind's own example: an employee file has no house number.
  const example = orders ? '{"Huisnummer": "streetNumber"}' : '{"Voornaam": "firstName"}';
  command
    .option('--format <format>', `csv | json | ndjson (default: from the extension of ${whose})`)
    .option(
      '--delimiter <char>',
      'CSV delimiter: "," ";" "tab" "|" or one other character (default: Excel\'s sep= line, else detected from the header)',
    )
    .option('--encoding <name>', 'utf-8 (default) | windows-1252 | latin1, for Excel "ANSI" exports')
    .option('--map <mapping.json>', `JSON object mapping your column names to ours, e.g. ${example}${mapNote}`);
  // Phone numbers and product lines are the orders' alone.
  if (orders) {
    command
      .option(
        '--strict-phone',
        'refuse phone numbers that are possible for their country but not known to be in use (default: accept them with a PHONE_UNVERIFIED note)',
      )
      .option(
        '--strict-products',
        'refuse an order that lists one product on two lines (default: merge them into one line with the summed quantity, noted PRODUCTS_MERGED)',
      );
  }
  command.option(
    '--allow-empty',
    `accept a file with no rows (default: refused, exit 3, "the file has no ${orders ? 'orders' : 'accounts'}")`,
  );
  if (orders)
    command.option(
      '--max-lines-per-order <n>',
      'most product lines in one order; a larger order is refused whole, its lines named (default: 1000)',
    );
  command.option(
    '--max-rejected <percent>',
    'refuse the file (exit 3, TOO_MANY_REJECTED, nothing queued) when more than this share of its first 10,000 rows are rejected; 100% never refuses (default: 50%)',
  );
  return command.option(
    '--threads <n>',
    'worker threads validating the rows of a large CSV file while it is read, ~40 MB each; 0: none (default: 1 on 4 or more cores, else 0)',
  );
}

/** The options `import` and `accounts import` share (`noun`: what the file holds, `order` or `account`). */
export function withImportOptions(command: Command, noun: string): Command {
  return withJsonOption(
    withReadingOptions(command, 'the file', '', noun === 'order' ? 'orders' : 'accounts'),
    'the summary (counts, batch id, rejects and results files; with --wait what was delivered)',
  )
    .option(
      '--wait',
      `follow the batch until every ${noun} is delivered, dead-lettered or held; then write <name>.results.csv`,
    )
    .option(
      '--force',
      `send again ${noun}s the ledger or the results file knows as delivered, also after LEDGER_LOST (explicit override)`,
    )
    .option(
      '--retry-refused',
      `send again ${noun}s dead-lettered before with the same content (by default an unchanged re-run leaves them: the same open dead letters)`,
    )
    .option(
      '--trust-results',
      `after LEDGER_LOST (Redis forgot an earlier import of this file): go on, sending only the ${noun}s the results file does not record as delivered`,
    )
    .option('--rejects <path>', 'where rejected rows go (default <name>.rejects.csv beside the input)')
    .option('--results <path>', 'with --wait: where results go (default <name>.results.csv beside the input)')
    .option(
      '--max-wait <seconds>',
      'with --wait: give up after this long, write the results so far and exit 5 with the reason (default 21600, 6 hours; the batch goes on)',
    )
    .option('--timeout <seconds>', 'alias of --max-wait');
}

/** What `validate` and `accounts validate` take. */
export interface ValidateFlags extends IngestFlags {
  out?: string;
  json?: boolean;
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

/** A `dead-letters` or `review` command's request to its lazily loaded half: the kind, the subcommand, its keys and flags. */
export interface ParkedRequest<A extends string, F> {
  /** Orders or accounts (`bulkorder accounts dead-letters`, `bulkorder accounts review`). */
  kind: RecordKindName;
  /** The subcommand. */
  action: A;
  /** Its positional arguments (keys; `show` takes one). */
  args: string[];
  /** Its flags. */
  flags: F;
}

/** Flags every `dead-letters` and `review` subcommand has. */
type ParkedFlags = ConfigFlags & { json?: boolean };

/** Runs one subcommand of a `dead-letters` or `review` group: its name, keys and flags; sets the exit code. */
type ParkedRun<A extends string, F> = (action: A, args: string[], flags: F) => Promise<void>;

/**
 * The action of every subcommand of a `dead-letters` or `review` group: loads the group's run
 * module (`load`), runs the request with `--json` refusals printed, sets the exit code. Only the
 * `announce` subcommand (the one that sends) announces the environment.
 */
export function parkedRunner<A extends string, F extends ParkedFlags>(
  io: CommandIo,
  kind: RecordKindName,
  runner: {
    announce: A;
    load: () => Promise<(request: ParkedRequest<A, F>, ctx: CommandContext) => Promise<number>>;
  },
): ParkedRun<A, F> {
  return (action, args, flags) =>
    runAction(
      io,
      flags,
      { load: runner.load, announce: action === runner.announce, json: flags.json === true, said: { kind, action } },
      (runParked, ctx) => runParked({ kind, action, args, flags }, ctx),
    );
}

/** One `dead-letters` or `review` group its subcommands are declared in. */
export interface ParkedGroup<A extends string, F> {
  group: Command;
  /** How its examples start: `bulkorder dead-letters`, `bulkorder accounts review`. */
  cli: string;
  /** `order` or `account`. */
  noun: string;
  run: ParkedRun<A, F>;
}

/** `list` of a `dead-letters` or `review` group: the filters, `--limit`, `--json` (`records` of what). */
export function declareParkedList<A extends string, F>(
  parked: ParkedGroup<A | 'list', F>,
  list: { description: string; records: string; examples: readonly string[] },
): void {
  const command = withConfigFlags(
    withParkedFilters(parked.group.command('list').description(list.description), parked.noun),
  )
    .option('--limit <n>', 'show at most this many', '50')
    .option(
      '--json',
      `print one JSON object instead of a table: kind, matched, total, shown, records (one per ${list.records}), exitCode`,
    );
  withExamples(command, list.examples).action((flags: F) => parked.run('list', [], flags));
}

/** `show <orderKey>` of a `dead-letters` or `review` group: one record, as text or `--json`. */
export function declareParkedShow<A extends string, F>(
  parked: ParkedGroup<A | 'show', F>,
  show: { description: string; sampleKey: string },
): void {
  const { cli } = parked;
  const { sampleKey } = show;
  const command = withConfigFlags(parked.group.command('show').description(show.description).argument('<orderKey>'))
    .option('--json', 'print the record as JSON')
    .addOption(accountsAlias());
  withExamples(command, [`${cli} show ${sampleKey}`, `${cli} show ${sampleKey} --json`]).action(
    (key: string, flags: F) => parked.run('show', [key], flags),
  );
}

/** A subcommand of a `dead-letters` or `review` group that acts on the records selected by keys or filters. */
export function parkedSelection(parked: { group: Command; noun: string }, name: string, description: string): Command {
  return withParkedFilters(parked.group.command(name).description(description).argument('[orderKeys...]'), parked.noun);
}

/** `--all`, needed to act on every parked record when no key or filter is given; `every` names them. */
export function withAllOption(command: Command, every: string): Command {
  return command.option('--all', `${every} (needed when no key or filter is given)`);
}

/** `--wait` and `--timeout` of `dead-letters retry` and `review release`, after `--all`. */
export function withRequeueOptions(command: Command, every: string): Command {
  return withAllOption(command, every)
    .option('--wait', 'follow the new batch until every order settles')
    .option('--timeout <seconds>', 'with --wait: stop following after this long');
}

/** The exit codes of `dead-letters retry` and `review release`, under their examples. */
export const REQUEUE_EXIT_CODES =
  'Exit codes: 0 queued (with --wait: every one delivered); 4 some were dead-lettered or held again, or --timeout ended the waiting; 2 no key, filter or --all; 5 Redis unavailable.';

/**
 * `--accounts`: the old spelling of `bulkorder accounts dead-letters|review ...`, kept hidden so
 * scripts written for it go on working (deprecated; see CHANGELOG).
 */
function accountsAlias(): Option {
  return new Option('--accounts', 'deprecated: use `bulkorder accounts dead-letters|review ...`').hideHelp();
}

/** Changing state without naming what: refuse, unless --all says so. */
export function requireSelection(filter: ParkedFilter, flags: { all?: boolean }, command: string): void {
  if (isEmptyFilter(filter) && flags.all !== true) {
    throw new UsageError(
      'SELECTION_MISSING',
      `${command}: name order keys, give a filter (--batch, --status, --code, --older-than, --newer-than), or pass --all.`,
    );
  }
}

/** A flag that takes a whole number of at least 1 (--limit, --timeout). */
export function positiveInteger(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new UsageError('USAGE', `${flag} must be a whole number of at least 1 (got '${text}').`);
  return value;
}

/** The kind a dead-letters or review action works on: its place in the tree, or the deprecated `--accounts`. */
export function chosenKind(kind: RecordKindName, flags: { accounts?: boolean }): RecordKindName {
  return flags.accounts === true ? 'accounts' : kind;
}

/** Who decided, where `--by` does not say (the OS user; `unknown` where it has none): for the ledger and a batch's history of fixes. */
export function osUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** SIGTERM or SIGINT: the signals the stop policy (src/commands/stopPolicy.ts) handles. */
export type StopSignal = 'SIGTERM' | 'SIGINT';

/** The exit code of a run a signal cut short: the shell's 128 + the signal's number. */
export function signalExitCode(signal: StopSignal): number {
  return 128 + (signal === 'SIGTERM' ? 15 : 2);
}

/** What a command sees of the stop policy. */
export interface StopPolicy {
  /**
   * Says the command stops gracefully: `stop` runs at the first signal, and the process exits
   * `graceMs` after it if the command has not returned by then. Returns the function that
   * withdraws it (the next signal then ends the process at once).
   */
  graceful(stop: (signal: StopSignal) => void, graceMs: number): () => void;
  /** The signal that asked this run to stop, if one did. */
  readonly stoppedBy: StopSignal | undefined;
}

/** A policy that never sees a signal (a command run in-process by a test). */
export const NO_SIGNALS: StopPolicy = { graceful: () => () => undefined, stoppedBy: undefined };
