import { payloadCells } from '../ingest/orderShape.js';
import type { OrderPayload } from '../ingest/types.js';
import type { ParkedRecord } from '../deliveryJob.js';

/** A parked order as rows of cells under a column list that `bulkorder import` reads. */
export interface OriginalRows {
  columns: readonly string[];
  rows: string[][];
  /** True when the input's own columns were unknown and the order was rebuilt from its payload. */
  canonical: boolean;
}

/** A kind's way from a payload back to its rows (RecordKind.rebuildRows), whatever its payload type. */
export interface RowRebuilder {
  readonly columns: readonly string[];
  rows(payload: never, orderRef: string | undefined): string[][];
}

/**
 * The record's rows as its input had them: its cells under its batch's columns. A job leaves its
 * cells out only when the input had exactly the kind's columns and the payload rebuilds them
 * exactly (importFile), so empty cells are rebuilt through the kind, as the input had them. When
 * the batch record is gone (it expires with the ledger; a parked record does not) or its columns
 * do not fit the cells, the rows are rebuilt in the kind's column names, which import reads without
 * a mapping (`canonical`). Either way the same key comes out of a re-import of unchanged rows.
 */
export function originalRows(
  record: ParkedRecord<unknown>,
  batchColumns: readonly string[] | undefined,
  rebuild: RowRebuilder | undefined,
): OriginalRows {
  const fits =
    batchColumns !== undefined &&
    batchColumns.length > 0 &&
    record.cells.length > 0 &&
    record.cells.every((row) => row.length === batchColumns.length);
  if (fits) return { columns: batchColumns, rows: record.cells.map((row) => [...row]), canonical: false };
  if (rebuild === undefined)
    return { columns: batchColumns ?? [], rows: record.cells.map((row) => [...row]), canonical: true };
  return {
    columns: rebuild.columns,
    rows: rebuild.rows(record.payload as never, record.orderRef),
    canonical: record.cells.length > 0,
  };
}

/** One row per product line, in ORDER_FIELDS order (read back along the field table's paths). */
export function canonicalRows(payload: OrderPayload, orderRef: string | undefined): string[][] {
  return payloadCells(payload, orderRef ?? '');
}
