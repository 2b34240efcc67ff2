import { assembleOrders } from './assembleOrders.js';
import { jsonUnit } from './jsonUnit.js';
import { ORDER_COLUMNS } from './orderColumns.js';
import { csvUnit, orderShapeKey, orderUnitErrors, settleOrderUnit, type OrderUnit } from './orderUnit.js';
import { openRecordSource, type IngestOptions, type RecordSchema, type RecordSource } from './openRecordSource.js';
import type { OrderPayload } from './types.js';
import { orderUnitCodec } from './unitCodec.js';
import { orderGroupLimit } from './orderGroupLimit.js';

export type { IngestOptions } from './openRecordSource.js';

/** An order file that passed the whole-file checks, ready to be read. */
export type OrderSource = RecordSource<OrderPayload>;

/** Orders as a record kind: rows are product lines, grouped into orders by orderRef. */
export const ORDER_SCHEMA: RecordSchema<OrderUnit, OrderPayload> = {
  columns: ORDER_COLUMNS,
  csvUnit,
  jsonUnit,
  codec: (plan) => orderUnitCodec(plan.fieldIndex),
  assemble: assembleOrders,
  thread: 'orders',
  limit: orderGroupLimit,
  ownErrors: orderUnitErrors,
  settle: settleOrderUnit,
  shape: orderShapeKey,
};

/**
 * Opens and checks an order file (existence, encoding, header, required columns) and throws
 * FileRefusedError (exit 3) before yielding anything; UsageError (exit 2) for a bad option or
 * mapping. Temporary files exist only while `items()` runs and are always removed.
 */
export function openOrderSource(file: string, options: IngestOptions = {}): Promise<OrderSource> {
  return openRecordSource(file, options, ORDER_SCHEMA);
}
