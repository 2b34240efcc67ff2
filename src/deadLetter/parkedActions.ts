import { ExitCode, UsageError } from '../errors.js';
import type { Config } from '../config.js';
import type { ParkedKind } from '../keyspace.js';
import type { RecordKind } from '../kinds/recordKind.js';
import { openServices, type Services } from '../services.js';
import { parkedDetails, parkedJson, parkedTable } from './formatParked.js';
import { isEmptyFilter, type ParkedFilter } from './parkedFilter.js';
import { ParkedStore } from './parkedStore.js';

/** What `dead-letters` and `review` work on: one kind's services and its dead letters or held records. */
export interface ParkedTarget {
  services: Services<unknown>;
  store: ParkedStore;
}

/**
 * Opens a kind's queue, ledger and batches and its dead letters or held records. The parked
 * records of every kind have one shape, so everything else is shared.
 */
export async function openParked(config: Config, kind: RecordKind<unknown>, parked: ParkedKind): Promise<ParkedTarget> {
  const services = await openServices(config, kind);
  return { services, store: new ParkedStore(services.redis, services.keys, services.ledger, parked) };
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
export async function showParked(store: ParkedStore, services: Services<unknown>, key: string, flags: { json?: boolean }): Promise<number> {
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
  process.stdout.write(parkedDetails(item, columns, services.kind.rebuildRows).join('\n') + '\n');
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
