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
import { encodingStream, inputDialect, outputDialect, type CsvDialect } from '../ingest/csvDialect.js';
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

/** Records read from the ledger at once (one pipeline of HGETALLs), and made into CSV text at once. */
const ROUND = 500;

/**
 * The rows of a results file, in the input's order, as CSV text: each round of records read from the
 * ledger in one pipeline and made into text at once (csv-stringify's sync API: the same bytes as its
 * stream, without a stream write per row); the header and BOM with the first.
 *
 * While its batch is still followed (`import --wait`), `early()` makes the rows that can no longer
 * change (a rejected record's; a record the ledger knows as delivered) as the batch settles, in file
 * order up to the first record whose outcome may still change (queued, being sent; dead-lettered or
 * held, which a person may send again meanwhile: after one of these, none more early), and keeps their
 * text: when the batch settles, only the records after them are read from the ledger. The text is
 * held in memory (a few hundred bytes a row): for records an import kept in memory, never for a whole
 * large file.
 */
export class ResultsRows<P> {
  readonly counts: ResultsCounts = { orders: 0, byOutcome: {}, possibleDuplicates: 0 };
  /** Records taken from the input and not made into rows yet, in order. */
  #waiting: RecordItem<P>[] = [];
  /** Text made by early() and not handed out yet. */
  #made: string[] = [];
  #first = true;
  #inputDone = false;
  /** early() met a dead-lettered or held record: it makes no more rows. */
  #stopped = false;
  readonly #next: () => Promise<IteratorResult<RecordItem<P>>>;
  readonly #close: () => Promise<void>;

  private constructor(
    private readonly target: Omit<ResultsTarget<P>, 'outPath' | 'file' | 'ingest'>,
    /** The dialect the file speaks (the input's, or as BULKORDER_OUTPUT_* says). */
    readonly dialect: CsvDialect,
    private readonly prior: PriorResults | undefined,
    records: Iterable<RecordItem<P>> | AsyncIterable<RecordItem<P>>,
  ) {
    if (Symbol.asyncIterator in records) {
      const it = records[Symbol.asyncIterator]();
      this.#next = () => it.next();
      this.#close = async () => {
        await it.return?.();
      };
    } else {
      const it = records[Symbol.iterator]();
      this.#next = () => Promise.resolve(it.next());
      this.#close = () => Promise.resolve();
    }
  }

  /** The rows of `target.batchId`'s results: the input's records (or `options.items`), in the dialect the file will speak. */
  static async open<P>(
    target: Omit<ResultsTarget<P>, 'outPath'>,
    options: WriteResultsOptions<P> = {},
  ): Promise<ResultsRows<P>> {
    // Opening reads only the head (its dialect); the records the import kept, or the file read again.
    const source = await target.kind.openSource(target.file, target.ingest);
    const dialect = outputDialect(inputDialect(source), options.csvOutput);
    return new ResultsRows(target, dialect, options.prior, options.items ?? source.items());
  }

  /**
   * Makes the rows that can no longer change, from the next record on, while the batch is still
   * followed; stops at the first whose outcome may. How many it made.
   */
  async early(): Promise<number> {
    let made = 0;
    while (!this.#stopped) {
      await this.#fill();
      if (this.#waiting.length === 0) return made;
      const entries = await this.#entries(this.#waiting);
      const final = this.#waiting.findIndex((item) => !settledForGood(item, entryOf(item, entries)));
      const count = final === -1 ? this.#waiting.length : final;
      if (count > 0) this.#made.push(this.#text(this.#waiting.splice(0, count), entries));
      made += count;
      if (final === -1) continue;
      // Dead-lettered or held, it stays so unless a person acts: the rows after it are made at the end, not read again and again.
      const blocking = this.#waiting[0];
      const state = blocking === undefined ? undefined : entryOf(blocking, entries)?.state;
      this.#stopped = state === 'dead' || state === 'held';
      return made;
    }
    return made;
  }

  /** The next text of the file (the rows early() made first, then the rest as the ledger knows them now); undefined after the last. */
  async next(): Promise<string | undefined> {
    const made = this.#made.shift();
    if (made !== undefined) return made;
    await this.#fill();
    if (this.#waiting.length > 0) {
      const items = this.#waiting;
      this.#waiting = [];
      return this.#text(items, await this.#entries(items));
    }
    // The header alone for a file of none.
    return this.#first ? this.#text([], new Map()) : undefined;
  }

  /** Lets go of the input (a spooled or re-read file's stream); safe to call more than once. */
  close(): Promise<void> {
    this.#inputDone = true;
    return this.#close();
  }

  /** Takes records from the input until ROUND wait (or the input ends). */
  async #fill(): Promise<void> {
    while (!this.#inputDone && this.#waiting.length < ROUND) {
      const next = await this.#next();
      if (next.done === true) this.#inputDone = true;
      else this.#waiting.push(next.value);
    }
  }

  async #entries(items: RecordItem<P>[]): Promise<Map<string, LedgerEntry | undefined>> {
    const validKeys = items.flatMap((item) => (item.kind === 'valid' ? [item.key] : []));
    const got = await this.target.ledger.getMany(validKeys);
    return new Map(validKeys.map((key, i) => [key, got[i]]));
  }

  /** Rows of `items` as CSV text (the header and BOM with the first), counted. */
  #text(items: RecordItem<P>[], entries: Map<string, LedgerEntry | undefined>): string {
    const { batchId, kind } = this.target;
    const layout = kind.results;
    const rows: Record<string, string>[] = [];
    for (const item of items) {
      const entry = entryOf(item, entries);
      const earlier = item.kind === 'valid' && entry === undefined ? this.prior?.delivered.get(item.key) : undefined;
      const reused = item.kind === 'valid' ? reusedRow(item, entry) : undefined;
      const common = earlier !== undefined ? priorRow(item, earlier) : (reused ?? resultRow(item, entry, batchId));
      const row = {
        ...layout.describe(item, entry),
        ...(earlier === undefined ? {} : { [layout.remoteIdColumn]: earlier.remoteId }),
        ...common,
        outcome: layout.refine?.(common.outcome, entry) ?? common.outcome,
      };
      this.counts.orders++;
      this.counts.byOutcome[row.outcome] = (this.counts.byOutcome[row.outcome] ?? 0) + 1;
      if (row.errorCode === POSSIBLE_DUPLICATE_CODE) this.counts.possibleDuplicates++;
      rows.push(row);
    }
    const text = stringify(rows, {
      columns: [...layout.columns],
      delimiter: this.dialect.delimiter,
      cast: { string: neutralizeCell },
      header: this.#first,
      bom: this.#first && this.dialect.bom,
    });
    this.#first = false;
    return text;
  }
}

/** A record's ledger entry among those read (none for a rejected record: it has no key). */
function entryOf(item: RecordItem<unknown>, entries: Map<string, LedgerEntry | undefined>): LedgerEntry | undefined {
  return item.kind === 'valid' ? entries.get(item.key) : undefined;
}

/**
 * Whether a record's row is the same now as when its batch has settled: a rejected record's, and a
 * record the ledger knows as delivered (a delivered entry never changes). Not one dead-lettered or
 * held (a person may send it again while the batch is followed), nor one without an entry.
 */
function settledForGood(item: RecordItem<unknown>, entry: LedgerEntry | undefined): boolean {
  return item.kind === 'rejected' || entry?.state === 'delivered';
}

/**
 * Writes `<name>.results.csv`: one row per record (order, or account with the accounts'
 * layout) of the file with its outcome as the ledger knows it now. The file is read again (its
 * keys are stable) instead of keeping a per-batch list in Redis, so a batch costs Redis only
 * its counters; `items`, the records an import of this process kept (a small file), save reading
 * and validating it a second time; `rows`, opened on them before and made early while the batch was
 * followed (ResultsRows), save reading the ledger entries of the rows made then. A record the ledger does not know
 * and `prior` (an earlier results file) names as delivered keeps that row's facts, `already-delivered`
 * with the message "already delivered (results file)".
 * The file speaks the input's dialect: a `;` file with a BOM gets `;` and a BOM, windows-1252 stays windows-1252.
 */
export async function writeResults<P>(
  target: ResultsTarget<P>,
  options: WriteResultsOptions<P> & {
    /** The rows opened before (ResultsRows.open, with these options) and made early while the batch was followed. */
    rows?: ResultsRows<P>;
  } = {},
): Promise<ResultsCounts> {
  const { outPath } = target;
  const rows = options.rows ?? (await ResultsRows.open(target, options));
  const { dialect } = rows;
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
  try {
    for (let text = await rows.next(); text !== undefined; text = await rows.next())
      if (!csv.write(text)) await Promise.race([once(csv, 'drain'), written]);
  } catch (error) {
    csv.destroy();
    await output.discard().catch(() => undefined);
    throw error;
  } finally {
    await rows.close();
  }
  csv.end();
  await written;
  await output.commit().catch(async (error: unknown) => {
    await output.discard().catch(() => undefined);
    throw writeFailure(outPath, error, failure);
  });
  return rows.counts;
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
