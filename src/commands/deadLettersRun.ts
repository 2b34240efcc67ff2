import { resolve } from 'node:path';
import { ExitCode } from '../errors.js';
import { exportDeadLetters } from '../deadLetter/exportDeadLetters.js';
import { printRequeued, purgeSelected, runParked, type ParkedAct } from './parkedRun.js';
import { parkedFilterFromFlags, type ParkedFilterFlags } from '../deadLetter/parkedFilter.js';
import { parseDelimiter } from '../ingest/parseDelimiter.js';
import { describeDialect } from '../ingest/csvDialect.js';
import { retryDeadLetters } from '../deadLetter/retryDeadLetters.js';
import { osUserName, requireSelection, type CommandContext, type ConfigFlags, type ParkedRequest } from './options.js';

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

type Context = CommandContext;

/** One `dead-letters` command as typed: the record kind, the action, its arguments and flags. */
export type DeadLetterRequest = ParkedRequest<DeadLetterAction, DeadLetterFlags>;

/** What export, retry and purge act on: the dead letters' store and services, the selection, the command. */
type DeadLetterAct = ParkedAct & { flags: DeadLetterFlags };

/** What to do next, in the words of the kind's commands (`bulkorder` or `bulkorder accounts`). */
function listHints(cli: string, noun: string): string[] {
  return [
    `details: ${cli} dead-letters show <${noun} key>`,
    `fix and resend: ${cli} dead-letters export --out fix.csv, correct the rows, ${cli} import fix.csv --wait`,
    `resend as they are: ${cli} dead-letters retry <${noun} key>... | --code X | --all`,
  ];
}

/** `bulkorder [accounts] dead-letters <action>`: returns the exit code. */
export async function runDeadLetters(request: DeadLetterRequest, ctx: Context): Promise<number> {
  const { action, args, flags } = request;
  const filter = parkedFilterFromFlags(flags, action === 'show' ? [] : args);
  return runParked('dead', request, ctx, { filter, hints: listHints, acts: { export: exportCsv, retry, purge } });
}

async function exportCsv({ store, services, filter, flags, ctx }: DeadLetterAct): Promise<number> {
  const items = await store.select(filter);
  if (items.length === 0) {
    ctx.stdout.write('no dead letters match: nothing written\n');
    return ExitCode.ok;
  }
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');
  const outPath = resolve(flags.out ?? `dead-letters-${ctx.config.env}-${stamp}.csv`);
  // --delimiter wins over BULKORDER_OUTPUT_DELIMITER, which wins over the input's own.
  const csvOutput = {
    ...ctx.config.files.csv,
    ...(flags.delimiter === undefined ? {} : { delimiter: parseDelimiter(flags.delimiter) }),
  };
  const files = await exportDeadLetters(items, services.batches, {
    outPath,
    csvOutput,
    rebuild: services.kind.rebuildRows,
  });
  const lines = files.map(
    (f) =>
      `${f.path}: ${f.deadLetters} dead letter${f.deadLetters === 1 ? '' : 's'}, ${f.rows} row${f.rows === 1 ? '' : 's'} (batch${f.batches.length === 1 ? '' : 'es'} ${f.batches.join(', ')}; ${describeDialect(f.dialect)})${f.canonical ? '; input columns unknown (batch expired): written in our column names' : ''}`,
  );
  if (files.length > 1) lines.push('the dead letters came from inputs with different columns: one file per column set');
  const withoutRef = files.flatMap((f) => f.withoutOrderRef);
  if (withoutRef.length > 0) {
    lines.push(
      `${withoutRef.length} of them have no orderRef: a fixed row gets a new key, so keep its reject_key column (it links the row to the dead letter it replaces)`,
    );
  }
  lines.push(
    'fix the rows (the reject_* columns are ignored as fields; reject_key links each row to its dead letter), then: bulkorder import <file> --wait',
    'rows already delivered are skipped; a dead letter whose fixed order is delivered is closed as superseded (bulkorder open shows what is left)',
  );
  ctx.stdout.write(lines.join('\n') + '\n');
  return ExitCode.ok;
}

async function retry(act: DeadLetterAct): Promise<number> {
  const { store, services, filter, flags, ctx } = act;
  requireSelection(filter, flags, 'dead-letters retry');
  const items = (await store.select(filter)).filter((item) => item.entry === undefined || item.entry.state === 'dead');
  const made = await retryDeadLetters(items, services.pipeline(ctx.logger));
  return printRequeued(made, act, { action: 'dead-letters retry', matched: items.length });
}

async function purge(act: DeadLetterAct): Promise<number> {
  return purgeSelected('dead', act, {
    action: 'dead-letters purge',
    decided: { by: osUserName() },
    text: (purged) =>
      `purged ${purged} dead letter${purged === 1 ? '' : 's'}; the orders were not sent; importing them again sends them\n`,
  });
}
