import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { atomicOutput } from '../files/atomicFile.js';
import { writeFailure, type WriteFailure } from '../files/writeFailure.js';
import { PassThrough } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { possibleDuplicate, type Ledger, type LedgerEntry } from '../ledger/ledger.js';
import type { IngestOptions } from '../ingest/openRecordSource.js';
import type { RecordItem } from '../ingest/types.js';
import { neutralizeCell } from '../ingest/csvCells.js';
import { fingerprintOf } from '../ledger/fingerprint.js';
import type { CommonColumn, ResultOutcome, ResultsCounts, ResultsKind } from '../kinds/resultsLayout.js';
import { ORDER_REF_REUSED, orderRefReusedMessage } from '../ledger/orderRefReused.js';
import { DELIVERED_BY_RESULTS, type PriorDelivery, type PriorResults } from './priorResults.js';
import { encodingStream, inputDialect, outputDialect } from '../ingest/csvDialect.js';
import type { CsvOutputSettings } from '../config.js';

/** What a results file may be written with besides its input. */
export interface WriteResultsOptions<P> {
  /** An earlier results file of the input (the import journal's second ledger). */
  prior?: PriorResults;
  /** The records an import of this process kept (a small file): saves reading and validating it again. */
  items?: Iterable<RecordItem<P>> | AsyncIterable<RecordItem<P>>;
  /** How the file departs from the input's CSV dialect (BULKORDER_OUTPUT_*); default: the input's delimiter, encoding and BOM. */
  csvOutput?: CsvOutputSettings;
}

/** Which batch's results file writeResults writes: its input, the batch, and where. */
export interface ResultsTarget<P> {
  /** The input file, read again for its records (unless `WriteResultsOptions.items`). */
  file: string;
  /** How the input is read (dialect, mapping), as the import read it. */
  ingest: IngestOptions;
  /** The batch whose outcomes the file reports. */
  batchId: string;
  /** The ledger the outcomes are read from. */
  ledger: Ledger;
  /** The results file's path (written atomically). */
  outPath: string;
  /** The record kind: its source and results layout. */
  kind: ResultsKind<P>;
}

/**
 * Writes `<name>.results.csv`: one row per record (order, or account with the accounts'
 * layout) of the file with its outcome as the ledger knows it now. The file is read again (its
 * keys are stable) instead of keeping a per-batch list in Redis, so a batch costs Redis only
 * its counters; `items`, the records an import of this process kept (a small file), save reading
 * and validating it a second time. A record the ledger does not know and `prior` (an earlier results file) names as
 * delivered keeps that row's facts, `already-delivered` with the message "already delivered (results file)".
 * The file speaks the input's dialect: a `;` file with a BOM gets `;` and a BOM, windows-1252 stays windows-1252.
 */
export async function writeResults<P>(
  target: ResultsTarget<P>,
  options: WriteResultsOptions<P> = {},
): Promise<ResultsCounts> {
  const { file, ingest, batchId, ledger, outPath, kind } = target;
  const { prior, items } = options;
  const layout = kind.results;
  // Opening reads only the head (its dialect); the records the import kept, or the file read again.
  const source = await kind.openSource(file, ingest);
  const dialect = outputDialect(inputDialect(source), options.csvOutput);
  const records = items ?? source.items();
  // Each round's rows made into text at once (csv-stringify's sync API: the same bytes as its stream, without a
  // stream write per row); the header and BOM with the first.
  const csvOptions = { columns: [...layout.columns], delimiter: dialect.delimiter, cast: { string: neutralizeCell } };
  let first = true;
  const csvText = (rows: Record<string, string>[]): string => {
    const text = stringify(rows, { ...csvOptions, header: first, bom: first && dialect.bom });
    first = false;
    return text;
  };
  const csv = new PassThrough();
  const failure: WriteFailure = {
    code: 'RESULTS_WRITE_FAILED',
    then: 'The orders are not affected; run the same import with --wait again to write the results (delivered orders are skipped, not sent again).',
  };
  const output = await atomicOutput(outPath);
  const sink = createWriteStream(output.writePath);
  // pipeline() ends both streams on a write error (a full disk): `written` rejects, and every
  // wait below races it, so a failed write surfaces instead of waiting for a drain that never comes.
  const written = (
    dialect.encoding === 'utf-8' ? pipeline(csv, sink) : pipeline(csv, encodingStream(dialect), sink)
  ).catch(async (error: unknown) => {
    await output.discard().catch(() => undefined);
    throw writeFailure(outPath, error, failure);
  });
  written.catch(() => undefined); // observed below; avoid an unhandled rejection while reading
  const counts: ResultsCounts = { orders: 0, byOutcome: {}, possibleDuplicates: 0 };
  let chunk: RecordItem<P>[] = [];

  const flush = async (): Promise<void> => {
    const items = chunk;
    chunk = [];
    const rows: Record<string, string>[] = [];
    const validKeys = items.flatMap((item) => (item.kind === 'valid' ? [item.key] : []));
    const entries = new Map<string, LedgerEntry | undefined>();
    const got = await ledger.getMany(validKeys);
    validKeys.forEach((key, i) => entries.set(key, got[i]));
    for (const item of items) {
      const entry = item.kind === 'valid' ? entries.get(item.key) : undefined;
      const earlier = item.kind === 'valid' && entry === undefined ? prior?.delivered.get(item.key) : undefined;
      const reused = item.kind === 'valid' ? reusedRow(item, entry) : undefined;
      const common = earlier !== undefined ? priorRow(item, earlier) : (reused ?? resultRow(item, entry, batchId));
      const row = {
        ...layout.describe(item, entry),
        ...(earlier === undefined ? {} : { [layout.remoteIdColumn]: earlier.remoteId }),
        ...common,
        outcome: layout.refine?.(common.outcome, entry) ?? common.outcome,
      };
      counts.orders++;
      counts.byOutcome[row.outcome] = (counts.byOutcome[row.outcome] ?? 0) + 1;
      if (row.errorCode === POSSIBLE_DUPLICATE_CODE) counts.possibleDuplicates++;
      rows.push(row);
    }
    // The header comes with the first rows, or alone for a file of none.
    if ((rows.length > 0 || first) && !csv.write(csvText(rows))) await Promise.race([once(csv, 'drain'), written]);
  };

  try {
    for await (const item of records) {
      chunk.push(item);
      if (chunk.length >= 500) await flush();
    }
    await flush();
  } catch (error) {
    csv.destroy();
    await output.discard().catch(() => undefined);
    throw error;
  }
  csv.end();
  await written;
  await output.commit().catch(async (error: unknown) => {
    await output.discard().catch(() => undefined);
    throw writeFailure(outPath, error, failure);
  });
  return counts;
}

function resultRow(
  item: RecordItem<unknown>,
  entry: LedgerEntry | undefined,
  batchId: string,
): Record<CommonColumn, string> & { outcome: ResultOutcome } {
  // Notes (PHONE_UNVERIFIED above all) travel with the order, so the results show what to check.
  const base = { lines: item.lines.join(' '), batch: '', notes: item.kind === 'valid' ? item.notes.join('; ') : '' };
  if (item.kind === 'rejected') {
    return {
      ...base,
      outcome: 'rejected',
      httpStatus: '',
      errorCode: [...new Set(item.errors.map((e) => e.code))].join(' '),
      message: item.errors.map((e) => `line ${e.line}${e.column ? ` ${e.column}` : ''}: ${e.message}`).join('; '),
      attempts: '0',
    };
  }
  const outcome = outcomeOf(entry, batchId);
  const duplicate = possibleDuplicate(entry);
  if (duplicate !== undefined) {
    // Still delivered, but an operator should check the service for a second copy.
    return {
      ...base,
      batch: entry?.batchId ?? '',
      outcome,
      httpStatus: entry?.httpStatus === undefined ? '' : String(entry.httpStatus),
      errorCode: POSSIBLE_DUPLICATE_CODE,
      message: duplicate,
      attempts: String(entry?.attempts ?? 0),
    };
  }
  return {
    ...base,
    batch: entry?.batchId ?? '',
    outcome,
    httpStatus: entry?.httpStatus === undefined ? '' : String(entry.httpStatus),
    errorCode: outcome === 'delivered' || outcome === 'already-delivered' ? '' : (entry?.code ?? ''),
    message: outcome === 'delivered' || outcome === 'already-delivered' ? '' : (entry?.message ?? ''),
    attempts: String(entry?.attempts ?? 0),
  };
}

/** A record an earlier results file names as delivered and the ledger does not know: that row again. */
function priorRow(
  item: RecordItem<unknown>,
  earlier: PriorDelivery,
): Record<CommonColumn, string> & { outcome: ResultOutcome } {
  return {
    lines: item.lines.join(' '),
    batch: earlier.batch,
    notes: item.kind === 'valid' ? item.notes.join('; ') : '',
    outcome: 'already-delivered',
    httpStatus: earlier.httpStatus,
    errorCode: '',
    message: DELIVERED_BY_RESULTS,
    attempts: earlier.attempts,
  };
}

/** errorCode of a delivered row that may exist twice on the service. */
export const POSSIBLE_DUPLICATE_CODE = 'POSSIBLE_DUPLICATE';

/** A valid record whose key the ledger knows with other content (and not dead-lettered): ORDER_REF_REUSED, not sent. */
function reusedRow(
  item: RecordItem<unknown> & { kind: 'valid' },
  entry: LedgerEntry | undefined,
): (Record<CommonColumn, string> & { outcome: ResultOutcome }) | undefined {
  if (entry?.fingerprint === undefined || entry.state === 'dead') return undefined;
  const now = fingerprintOf(item.payload);
  if (now.hash === entry.fingerprint.hash) return undefined;
  const earlier = {
    batchId: entry.batchId,
    at: entry.deliveredAt ?? entry.updatedAt,
    parts: entry.fingerprint.parts,
    state: entry.state,
  };
  return {
    lines: item.lines.join(' '),
    batch: entry.batchId,
    outcome: 'rejected',
    httpStatus: '',
    errorCode: ORDER_REF_REUSED,
    message: orderRefReusedMessage(item.orderRef, earlier, now),
    attempts: '0',
    notes: item.notes.join('; '),
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
