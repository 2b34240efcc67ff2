import { resolve } from 'node:path';
import { ExitCode } from '../errors.js';
import type { Services } from '../services.js';
import { exportDeadLetters } from '../deadLetter/exportDeadLetters.js';
import { listParked, openParked, showParked } from '../deadLetter/parkedActions.js';
import { parkedFilterFromFlags, type ParkedFilter, type ParkedFilterFlags } from '../deadLetter/parkedFilter.js';
import { parseDelimiter } from '../ingest/parseDelimiter.js';
import type { ParkedStore } from '../deadLetter/parkedStore.js';
import { KINDS } from '../kinds/kindByName.js';
import { reportRequeued } from '../deadLetter/followRequeued.js';
import { retryDeadLetters } from '../deadLetter/retryDeadLetters.js';
import {
  chosenKind,
  positiveInteger,
  printReport,
  requireSelection,
  type RecordKindName,
  type CommandContext,
  type ConfigFlags,
} from './options.js';

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

/** What to do next, in the words of the kind's commands (`bulkorder` or `bulkorder accounts`). */
function listHints(cli: string, noun: string): string[] {
  return [
    `details: ${cli} dead-letters show <${noun} key>`,
    `fix and resend: ${cli} dead-letters export --out fix.csv, correct the rows, ${cli} import fix.csv --wait`,
    `resend as they are: ${cli} dead-letters retry <${noun} key>... | --code X | --all`,
  ];
}

/** `bulkorder [accounts] dead-letters <action>`: returns the exit code. */
export async function runDeadLetters(
  kind: RecordKindName,
  action: DeadLetterAction,
  args: string[],
  flags: DeadLetterFlags,
  ctx: Context,
): Promise<number> {
  const filter = parkedFilterFromFlags(flags, action === 'show' ? [] : args);
  const { services, store } = await openParked(ctx.config, KINDS[chosenKind(kind, flags)], 'dead');
  try {
    switch (action) {
      case 'list':
        ctx.stdout.write(
          await listParked(
            store,
            filter,
            { json: flags.json === true, limit: positiveInteger(flags.limit ?? '50', '--limit') },
            listHints(services.kind.cli, services.kind.noun),
          ),
        );
        return ExitCode.ok;
      case 'show':
        ctx.stdout.write(await showParked(store, services, args[0]!, { json: flags.json === true }));
        return ExitCode.ok;
      case 'export':
        return await exportCsv(store, services, filter, flags, ctx);
      case 'retry':
        return await retry(store, services, filter, flags, ctx);
      case 'purge':
        return await purge(store, services, filter, flags, ctx);
    }
  } finally {
    await services.close();
  }
}

async function exportCsv(
  store: ParkedStore,
  services: Services<unknown>,
  filter: ParkedFilter,
  flags: DeadLetterFlags,
  ctx: Context,
): Promise<number> {
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
  const delimiter = flags.delimiter === undefined ? ',' : parseDelimiter(flags.delimiter);
  const files = await exportDeadLetters(items, services.batches, {
    outPath,
    delimiter,
    rebuild: services.kind.rebuildRows,
  });
  const lines = files.map(
    (f) =>
      `${f.path}: ${f.deadLetters} dead letter${f.deadLetters === 1 ? '' : 's'}, ${f.rows} row${f.rows === 1 ? '' : 's'} (batch${f.batches.length === 1 ? '' : 'es'} ${f.batches.join(', ')})${f.canonical ? '; input columns unknown (batch expired): written in our column names' : ''}`,
  );
  if (files.length > 1) lines.push('the dead letters came from inputs with different columns: one file per column set');
  const withoutRef = files.flatMap((f) => f.withoutOrderRef);
  if (withoutRef.length > 0) {
    lines.push(
      `${withoutRef.length} of them have no orderRef: a fixed row is a new order, so once it is delivered purge the original: bulkorder dead-letters purge ${withoutRef.slice(0, 3).join(' ')}${withoutRef.length > 3 ? ' ...' : ''}`,
    );
  }
  lines.push(
    'fix the rows (the reject_* columns are ignored on import), then: bulkorder import <file> --wait',
    'rows already delivered are skipped; dead letters whose orders get delivered leave the list',
  );
  ctx.stdout.write(lines.join('\n') + '\n');
  return ExitCode.ok;
}

async function retry(
  store: ParkedStore,
  services: Services<unknown>,
  filter: ParkedFilter,
  flags: DeadLetterFlags,
  ctx: Context,
): Promise<number> {
  requireSelection(filter, flags, 'dead-letters retry');
  const items = (await store.select(filter)).filter((item) => item.entry === undefined || item.entry.state === 'dead');
  const made = await retryDeadLetters(items, services.pipeline(ctx.logger));
  const report = await reportRequeued(made, services.batches, {
    wait: flags.wait === true,
    out: ctx.stderr,
    ...(flags.timeout === undefined ? {} : { timeoutMs: positiveInteger(flags.timeout, '--timeout') * 1000 }),
  });
  const json = {
    kind: services.kind.name,
    action: 'dead-letters retry',
    matched: items.length,
    batches: report.batches,
  };
  return printReport(
    ctx.stdout,
    { text: report.lines.join('\n') + '\n', json, exitCode: report.exitCode },
    flags.json === true,
  );
}

async function purge(
  store: ParkedStore,
  services: Services<unknown>,
  filter: ParkedFilter,
  flags: DeadLetterFlags,
  ctx: Context,
): Promise<number> {
  requireSelection(filter, flags, 'dead-letters purge');
  const items = await store.select(filter);
  const purged = await services.ledger.purgeParked(
    'dead',
    items.map((item) => item.record.key),
  );
  ctx.stdout.write(
    `purged ${purged} dead letter${purged === 1 ? '' : 's'}; the orders were not sent; importing them again sends them\n`,
  );
  return ExitCode.ok;
}
