import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { Ledger, LedgerEntry } from '../ledger/ledger.js';
import { openOrderSource, type IngestOptions } from '../ingest/openOrderSource.js';
import type { IngestItem } from '../ingest/types.js';
import { neutralizeCell } from '../ingest/csvCells.js';

/** Outcome column of the results file. */
export type ResultOutcome = 'delivered' | 'already-delivered' | 'dead-lettered' | 'held-for-review' | 'queued-elsewhere' | 'pending' | 'rejected';

export const RESULT_COLUMNS = ['orderKey', 'orderRef', 'lines', 'outcome', 'remoteOrderId', 'httpStatus', 'errorCode', 'message', 'attempts', 'batch'] as const;

export interface ResultsCounts {
  orders: number;
  byOutcome: Partial<Record<ResultOutcome, number>>;
}

/**
 * Writes `<name>.results.csv`: one row per order of the file with its outcome as the ledger
 * knows it now. The file is read again (its keys are stable) instead of keeping a per-batch
 * list in Redis, so a batch costs Redis only its counters.
 */
export async function writeResults(file: string, ingest: IngestOptions, batchId: string, ledger: Ledger, outPath: string): Promise<ResultsCounts> {
  const source = await openOrderSource(file, ingest);
  const csv = stringify({ header: true, columns: [...RESULT_COLUMNS], bom: true, cast: { string: neutralizeCell } });
  const output = createWriteStream(outPath);
  csv.pipe(output);
  const counts: ResultsCounts = { orders: 0, byOutcome: {} };
  let chunk: IngestItem[] = [];

  const flush = async (): Promise<void> => {
    const items = chunk;
    chunk = [];
    const validKeys = items.flatMap((item) => (item.kind === 'valid' ? [item.key] : []));
    const entries = new Map<string, LedgerEntry | undefined>();
    (await ledger.getMany(validKeys)).forEach((entry, i) => entries.set(validKeys[i]!, entry));
    for (const item of items) {
      const row = resultRow(item, item.kind === 'valid' ? entries.get(item.key) : undefined, batchId);
      counts.orders++;
      counts.byOutcome[row.outcome] = (counts.byOutcome[row.outcome] ?? 0) + 1;
      if (!csv.write(row)) await once(csv, 'drain');
    }
  };

  for await (const item of source.items()) {
    chunk.push(item);
    if (chunk.length >= 500) await flush();
  }
  await flush();
  csv.end();
  await finished(output);
  return counts;
}

function resultRow(item: IngestItem, entry: LedgerEntry | undefined, batchId: string): Record<(typeof RESULT_COLUMNS)[number], string> & { outcome: ResultOutcome } {
  const base = { orderKey: item.key ?? '', orderRef: item.orderRef ?? '', lines: item.lines.join(' '), batch: '' };
  if (item.kind === 'rejected') {
    return {
      ...base,
      outcome: 'rejected',
      remoteOrderId: '',
      httpStatus: '',
      errorCode: [...new Set(item.errors.map((e) => e.code))].join(' '),
      message: item.errors.map((e) => `line ${e.line}${e.column ? ` ${e.column}` : ''}: ${e.message}`).join('; '),
      attempts: '0',
    };
  }
  const outcome = outcomeOf(entry, batchId);
  return {
    ...base,
    batch: entry?.batchId ?? '',
    outcome,
    remoteOrderId: entry?.remoteId ?? '',
    httpStatus: entry?.httpStatus === undefined ? '' : String(entry.httpStatus),
    errorCode: outcome === 'delivered' || outcome === 'already-delivered' ? '' : (entry?.code ?? ''),
    message: outcome === 'delivered' || outcome === 'already-delivered' ? '' : (entry?.message ?? ''),
    attempts: String(entry?.attempts ?? 0),
  };
}

function outcomeOf(entry: LedgerEntry | undefined, batchId: string): ResultOutcome {
  switch (entry?.state) {
    case 'delivered':
      return entry.batchId === batchId ? 'delivered' : 'already-delivered';
    case 'dead':
      return 'dead-lettered';
    case 'held':
      return 'held-for-review';
    case 'queued':
    case 'sending':
      return entry.batchId === batchId ? 'pending' : 'queued-elsewhere';
    default:
      return 'pending';
  }
}
