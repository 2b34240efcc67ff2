import { ORDER_FIELDS } from '../ingest/orderFields.js';
import { payloadLines } from '../ingest/orderShape.js';
import type { OrderPayload } from '../ingest/types.js';
import type { ParkedRecord } from '../deliveryJob.js';

/** A parked order as rows of cells under a column list that `bulkorder import` reads. */
export interface OriginalRows {
  columns: readonly string[];
  rows: string[][];
  /** True when the input's own columns were unknown and the order was rebuilt from its payload. */
  canonical: boolean;
}

/**
 * The order's rows as its input had them: the record's cells under its batch's columns. When the
 * batch record is gone (it expires with the ledger; a parked record does not) or its columns do not
 * fit the cells, the rows are rebuilt from the payload in our own column names, which import reads
 * without a mapping. Either way the same order key comes out of a re-import of unchanged rows.
 */
export function originalRows(record: ParkedRecord, batchColumns: readonly string[] | undefined): OriginalRows {
  const fits = batchColumns !== undefined && batchColumns.length > 0 && record.cells.length > 0 && record.cells.every((row) => row.length === batchColumns.length);
  if (fits) return { columns: batchColumns, rows: record.cells.map((row) => [...row]), canonical: false };
  return { columns: ORDER_FIELDS, rows: canonicalRows(record.payload, record.orderRef), canonical: true };
}

/** One row per product line, in ORDER_FIELDS order (read back along the field table's paths). */
export function canonicalRows(payload: OrderPayload, orderRef: string | undefined): string[][] {
  return payloadLines(payload, orderRef ?? '').map((line) => ORDER_FIELDS.map((field) => String(line[field] ?? '')));
}
