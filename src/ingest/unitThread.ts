/**
 * The worker-thread side of unitPool.ts: turns a batch of CSV records into spill lines with the
 * record kind's own csvUnit and codec, exactly as the main thread would. Loaded by piscina.
 * The schemas are imported statically (a dynamic import of a .ts module fails in a thread run
 * through tsx on Node 20, which the tests do).
 */
import { ORDER_SCHEMA } from './openOrderSource.js';
import type { ThreadedSchema, UnitTask } from './unitPool.js';
import { encodeSpill, type EncodedUnits } from './unitStore.js';

const SCHEMAS = { orders: ORDER_SCHEMA } satisfies Record<ThreadedSchema, unknown>;

export default function encodeRecords(task: UnitTask): EncodedUnits {
  const schema = SCHEMAS[task.schema];
  return encodeSpill(
    task.records.map((record) => schema.csvUnit(record, task.plan, task.rules)),
    schema.codec(task.plan),
    task.bucketCount,
    task.bucketCount > 1 ? schema.settle : undefined,
  );
}
