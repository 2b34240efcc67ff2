import type { LedgerEntry } from '../ledger/ledger.js';
import { encodeRemoteId } from '../delivery/remoteId.js';
import type { IngestOptions, RecordSource } from '../ingest/openRecordSource.js';
import type { OrderPayload, RecordItem } from '../ingest/types.js';

/** Outcome column of the results file. */
export type ResultOutcome =
  'delivered' | 'already-delivered' | 'dead-lettered' | 'held-for-review' | 'queued-elsewhere' | 'pending' | 'rejected';

/** The columns every results file ends with, whatever the record kind: how the last attempt went, and where. */
export const RESULT_TAIL_COLUMNS = ['httpStatus', 'errorCode', 'message', 'attempts', 'batch', 'notes'] as const;

const RESULT_COLUMNS = ['orderKey', 'orderRef', 'lines', 'outcome', 'remoteOrderId', ...RESULT_TAIL_COLUMNS] as const;

/** The columns every results file has, whatever the record kind. */
export type CommonColumn = 'lines' | 'outcome' | (typeof RESULT_TAIL_COLUMNS)[number];

/**
 * What differs between the results files of two record kinds (each RecordKind, src/kinds/, has one):
 * the column list, the kind's own columns (key, identity, the id the API returned), and
 * outcomes the kind names more precisely (accounts: `account-exists` for a 409).
 */
export interface ResultsLayout<P> {
  columns: readonly string[];
  /** The column holding the record's key, and the one holding the id the API returned (src/batches/priorResults.ts reads them back). */
  keyColumn: string;
  remoteIdColumn: string;
  /** The kind's own cells of one row; `entry` is the ledger's, absent for rejected rows. */
  describe(item: RecordItem<P>, entry: LedgerEntry | undefined): Record<string, string>;
  /** A more precise outcome than the generic one, or undefined to keep it. */
  refine?(outcome: ResultOutcome, entry: LedgerEntry | undefined): string | undefined;
}

/** The orders results file. */
export const ORDER_RESULTS: ResultsLayout<OrderPayload> = {
  columns: RESULT_COLUMNS,
  keyColumn: 'orderKey',
  remoteIdColumn: 'remoteOrderId',
  describe: (item, entry) => ({
    orderKey: item.key ?? '',
    orderRef: item.orderRef ?? '',
    remoteOrderId: entry?.remoteId === undefined ? '' : encodeRemoteId(entry.remoteId),
  }),
};

/** What writeResults needs of a record kind: how its input is read again, and its layout (a RecordKind is one). */
export interface ResultsKind<P> {
  openSource(file: string, options: IngestOptions): Promise<RecordSource<P>>;
  readonly results: ResultsLayout<P>;
}

export interface ResultsCounts {
  orders: number;
  byOutcome: Partial<Record<string, number>>;
  /** Delivered records an earlier attempt may have stored too (answered 5xx); marked POSSIBLE_DUPLICATE. */
  possibleDuplicates: number;
}
