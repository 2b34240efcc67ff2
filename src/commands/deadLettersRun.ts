import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { openParkedTarget } from './parkedTarget.js';
import { exportDeadLetters } from '../deadLetter/exportDeadLetters.js';
import { parkedDetails, parkedJson, parkedTable } from '../deadLetter/formatParked.js';
import { isEmptyFilter, parkedFilterFromFlags, type ParkedFilter } from '../deadLetter/parkedFilter.js';
import type { ParkedStore } from '../deadLetter/parkedStore.js';
import { reportRequeued } from '../deadLetter/followRequeued.js';
import { retryDeadLetters } from '../deadLetter/retryDeadLetters.js';
import type { DeadLetterAction, DeadLetterFlags } from './deadLetters.js';

type Context = { config: Config; logger: Logger };

const LIST_HINTS = [
  'details: bulkorder dead-letters show <order key>',
  'fix and resend: bulkorder dead-letters export --out fix.csv, correct the rows, bulkorder import fix.csv --wait',
  'resend as they are: bulkorder dead-letters retry <order key>... | --code X | --all',
];

/** `bulkorder dead-letters <action>`: returns the exit code. */
export async function runDeadLetters(action: DeadLetterAction, args: string[], flags: DeadLetterFlags, ctx: Context): Promise<number> {
  const filter = parkedFilterFromFlags(flags, action === 'show' ? [] : args);
  const { services, jobName, store } = await openParkedTarget(ctx.config, flags.accounts === true, 'dead');
  try {
    switch (action) {
      case 'list':
        return await listParked(store, filter, flags, LIST_HINTS);
      case 'show':
        return await showParked(store, services, args[0]!, flags);
      case 'export':
        return await exportCsv(store, services, filter, flags, ctx);
      case 'retry':
        return await retry(store, services, filter, flags, ctx, jobName);
      case 'purge':
        return await purge(store, services, filter, flags);
    }
  } finally {
    await services.close();
  }
}

/** `list` of dead letters or held orders: a table (or JSON), then what to do next. */
export async function listParked(store: ParkedStore, filter: ParkedFilter, flags: { json?: boolean; limit?: string }, hints: readonly string[]): Promise<number> {
  const limit = positiveInteger(flags.limit ?? '50', '--limit');
  const noun = store.kind === 'dead' ? 'dead letter' : 'held order';
  const items = [];
  let matched = 0;
  for await (const item of store.scan(filter)) {
    if (matched++ < limit) items.push(item);
  }
  if (flags.json === true) {
    process.stdout.write(JSON.stringify(items.map((item) => parkedJson(item)), null, 2) + '\n');
    return ExitCode.ok;
  }
  const total = await store.count();
  if (matched === 0) {
    process.stdout.write(total === 0 ? `no ${noun}s\n` : `no ${noun}s match (${total} in all)\n`);
    return ExitCode.ok;
  }
  const head =
    `${matched} ${noun}${matched === 1 ? '' : 's'} match${matched === 1 ? 'es' : ''} (${total} in all)${matched > limit ? `; the first ${limit} shown (--limit)` : ''}; ` +
    `each is kept ${Math.round(store.retentionMs / 86_400_000)} days after it was parked (BULKORDER_PARKED_RETENTION_DAYS), purge removes it sooner`;
  process.stdout.write([head, '', ...parkedTable(items), '', ...hints].join('\n') + '\n');
  return ExitCode.ok;
}

/** `show` of one dead letter or held order. */
export async function showParked(store: ParkedStore, services: Services, key: string, flags: { json?: boolean }): Promise<number> {
  const item = await store.get(key);
  if (item === undefined) {
    const [code, what, list] = store.kind === 'dead' ? ['DEAD_LETTER_NOT_FOUND', 'dead letter', 'dead-letters list'] : ['HELD_ORDER_NOT_FOUND', 'held order', 'review list'];
    throw new UsageError(code, `no ${what} ${key} (bulkorder ${list} shows the keys)`);
  }
  if (flags.json === true) {
    process.stdout.write(JSON.stringify(parkedJson(item), null, 2) + '\n');
    return ExitCode.ok;
  }
  const columns = (await services.batches.get(item.record.batchId))?.columns;
  process.stdout.write(parkedDetails(item, columns).join('\n') + '\n');
  return ExitCode.ok;
}

async function exportCsv(store: ParkedStore, services: Services, filter: ParkedFilter, flags: DeadLetterFlags, ctx: Context): Promise<number> {
  const items = await store.select(filter);
  if (items.length === 0) {
    process.stdout.write('no dead letters match: nothing written\n');
    return ExitCode.ok;
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '');
  const outPath = resolve(flags.out ?? `dead-letters-${ctx.config.env}-${stamp}.csv`);
  const delimiter = flags.delimiter === undefined ? ',' : flags.delimiter === 'tab' ? '\t' : flags.delimiter;
  if (delimiter.length !== 1 || /["\r\n]/.test(delimiter)) throw new UsageError('DELIMITER_INVALID', `--delimiter must be "tab" or one character other than a quote (got ${JSON.stringify(flags.delimiter)}).`);
  const files = await exportDeadLetters(items, services.batches, { outPath, delimiter });
  const lines = files.map(
    (f) => `${f.path}: ${f.deadLetters} dead letter${f.deadLetters === 1 ? '' : 's'}, ${f.rows} row${f.rows === 1 ? '' : 's'} (batch${f.batches.length === 1 ? '' : 'es'} ${f.batches.join(', ')})${f.canonical ? '; input columns unknown (batch expired): written in our column names' : ''}`,
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
  process.stdout.write(lines.join('\n') + '\n');
  return ExitCode.ok;
}

async function retry(store: ParkedStore, services: Services, filter: ParkedFilter, flags: DeadLetterFlags, ctx: Context, jobName: string): Promise<number> {
  requireSelection(filter, flags, 'dead-letters retry');
  const items = (await store.select(filter)).filter((item) => item.entry === undefined || item.entry.state === 'dead');
  const made = await retryDeadLetters(items, services.ledger, {
    queue: services.queue,
    batches: services.batches,
    env: ctx.config.env,
    logger: ctx.logger,
    jobOptions: services.jobOptions,
    jobName,
  });
  const report = await reportRequeued(made, services.batches, { wait: flags.wait === true, ...(flags.timeout === undefined ? {} : { timeoutMs: positiveInteger(flags.timeout, '--timeout') * 1000 }) });
  process.stdout.write(report.lines.join('\n') + '\n');
  return report.exitCode;
}

async function purge(store: ParkedStore, services: Services, filter: ParkedFilter, flags: DeadLetterFlags): Promise<number> {
  requireSelection(filter, flags, 'dead-letters purge');
  const items = await store.select(filter);
  const purged = await services.ledger.purgeParked('dead', items.map((item) => item.record.orderKey));
  process.stdout.write(`purged ${purged} dead letter${purged === 1 ? '' : 's'}; the orders were not sent; importing them again sends them\n`);
  return ExitCode.ok;
}

/** Changing state without naming what: refuse, unless --all says so. */
export function requireSelection(filter: ParkedFilter, flags: { all?: boolean }, command: string): void {
  if (isEmptyFilter(filter) && flags.all !== true) {
    throw new UsageError('SELECTION_MISSING', `${command}: name order keys, give a filter (--batch, --status, --code, --older-than, --newer-than), or pass --all.`);
  }
}

/** A flag that takes a whole number of at least 1. */
export function positiveInteger(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError('USAGE', `${flag} must be a whole number of at least 1 (got '${text}').`);
  return value;
}
