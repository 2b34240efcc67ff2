import { UsageError } from '../errors.js';
import type { Config } from '../config.js';
import type { ParkedKind } from '../keyspace.js';
import type { RecordKind } from '../kinds/recordKind.js';
import { openServices, type Services } from '../services.js';
import { parkedDetails, parkedJson, parkedTable } from './formatParked.js';
import type { ParkedFilter } from './parkedFilter.js';
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
  // A retry or release queues jobs: stamped on Redis's clock, as `import` stamps them.
  const services = await openServices(config, kind, { adoptRedisClock: true });
  return { services, store: new ParkedStore(services.redis, services.keys, services.ledger, parked) };
}

/**
 * What `list` says of dead letters or held records: at most `limit` of them, a head counting them,
 * then what to do next (`text`); for `--json` one object, as every `--json` prints (`json`: the
 * kind, how many match and exist in all, and the records shown). The command prints one of them.
 */
export async function listParked(
  store: ParkedStore,
  filter: ParkedFilter,
  options: { limit: number; kind: string },
  hints: readonly string[],
): Promise<{ text: string; json: Record<string, unknown> }> {
  const { limit } = options;
  const noun = store.kind === 'dead' ? 'dead letter' : 'held order';
  const items = [];
  let matched = 0;
  for await (const item of store.scan(filter)) {
    if (matched++ < limit) items.push(item);
  }
  const total = await store.count();
  const json = {
    kind: options.kind,
    list: store.kind === 'dead' ? 'dead-letters' : 'held',
    matched,
    total,
    shown: items.length,
    records: items.map((item) => parkedJson(item)),
  };
  if (matched === 0) return { text: total === 0 ? `no ${noun}s\n` : `no ${noun}s match (${total} in all)\n`, json };
  const head =
    `${matched} ${noun}${matched === 1 ? '' : 's'} match${matched === 1 ? 'es' : ''} (${total} in all)${matched > limit ? `; the first ${limit} shown (--limit)` : ''}; ` +
    `each is kept ${Math.round(store.retentionMs / 86_400_000)} days after it was parked (BULKORDER_PARKED_RETENTION_DAYS), purge removes it sooner`;
  return { text: [head, '', ...parkedTable(items), '', ...hints].join('\n') + '\n', json };
}

/** The text of `show` for one dead letter or held record (JSON or lines); a key not parked is a usage error. */
export async function showParked(
  store: ParkedStore,
  services: Services<unknown>,
  key: string,
  options: { json: boolean },
): Promise<string> {
  const item = await store.get(key);
  if (item === undefined) {
    const [code, what, list] =
      store.kind === 'dead'
        ? (['DEAD_LETTER_NOT_FOUND', 'dead letter', 'dead-letters list'] as const)
        : (['HELD_ORDER_NOT_FOUND', 'held order', 'review list'] as const);
    throw new UsageError(code, `no ${what} ${key} (bulkorder ${list} shows the keys)`);
  }
  if (options.json) return JSON.stringify(parkedJson(item), null, 2) + '\n';
  const columns = (await services.batches.get(item.record.batchId))?.columns;
  return parkedDetails(item, columns, services.kind.rebuildRows).join('\n') + '\n';
}
