/**
 * The shapes that leave the ingest stage. Everything here is plain data (JSON-safe), so the
 * `import` command can put a ValidOrder's payload straight into a BullMQ job.
 */

import type { RowErrorCode } from '../errorCodes.js';
import type { OrderPayload } from './orderFields.js';

/** One order as POST /orders takes it; derived from the field table (orderFields.ts). */
export type { OrderPayload };

/** One problem with one row (or with the order the row belongs to). */
export interface RowError {
  /** Physical line where the record starts, 1-based; the CSV header is line 1. */
  line: number;
  /** Our field name (e.g. `telephoneNumber`), when the problem is about one field. */
  column?: string;
  /** The offending value as written, masked when it is personal data (see maskValue). */
  value?: string;
  /** Stable machine code, e.g. `PHONE_INVALID`: a row's code of the catalogue (src/errorCodes.ts). */
  code: RowErrorCode;
  /** A sentence a person can act on. Never contains unmasked personal data. */
  message: string;
}

/**
 * A record that passed every local check and may be sent: an order (ValidOrder) or, through the
 * same machinery, another record kind such as an employee account (src/accounts).
 */
export interface ValidRecord<P> {
  kind: 'valid';
  /** Stable key (see orderKey.ts, accountKey.ts): a BullMQ-safe job id, the same on every import. */
  key: string;
  file: string;
  /** Start lines of the record's rows, ascending. */
  lines: number[];
  orderRef?: string;
  payload: P;
  /** Original columns -> original text, one per row, in line order (for exports and re-import). */
  rows: Record<string, string>[];
  /** The start line of each entry of `rows` (a JSON order's product lines share one line). */
  rowLines: number[];
  /** Normalisations applied, e.g. "line 7: countryCode 'nl' -> 'NL'". */
  notes: string[];
}

/** An order that passed every local check and may be sent. */
export type ValidOrder = ValidRecord<OrderPayload>;

/** A record (order, account, or a lone unreadable record) that must not be sent, with every reason. */
export interface RejectedRecord {
  kind: 'rejected';
  /** Present when the record could be identified (e.g. an orderRef with a valid businessCustomerId). */
  key?: string;
  file: string;
  lines: number[];
  orderRef?: string;
  /** Original columns -> original text, one per row, in line order. */
  rows: Record<string, string>[];
  /** The start line of each entry of `rows`. */
  rowLines: number[];
  /** Every problem found, in line order. */
  errors: RowError[];
}

export type IngestItem = ValidOrder | RejectedRecord;

/** What a record source yields: valid records of payload P, or rejects (the same shape for every kind). */
export type RecordItem<P> = ValidRecord<P> | RejectedRecord;

/** Input formats; chosen from the file extension unless given. */
export type IngestFormat = 'csv' | 'json' | 'ndjson';

/** Text encodings accepted for input files. */
export type IngestEncoding = 'utf-8' | 'windows-1252' | 'latin1';
