import { maskValue } from './maskValue.js';
import type { AssembleContext } from './openRecordSource.js';
import { PERSONAL_FIELDS, RECIPIENT_FIELDS } from './orderFields.js';
import { buildPayload } from './orderShape.js';
import type { OrderUnit, UnitRow } from './orderUnit.js';
import { payloadKey } from './orderKey.js';
import { rowNote } from './rowNotes.js';
import type { IngestItem, RejectedRecord, RowError, ValidOrder } from './types.js';
import { defined } from '../errors.js';

/**
 * Second pass over one bucket: units of one orderRef become one order (checked for recipient
 * agreement and repeated products), valid orders without orderRef get their occurrence number
 * among identical ones, and items come out in order of first line. Every unit with the same
 * group key is in the same bucket, and a bucket's units are in file order. Items are built one
 * at a time as they are asked for, so a bucket's items are never all in memory at once.
 */
export function assembleOrders(units: readonly OrderUnit[], context: AssembleContext): Iterable<IngestItem> {
  const [first] = units;
  if (first === undefined) return [];
  // The units of one order (what a file grouped in one stream hands over): nothing to group or sort, no generator.
  if (first.kind === 'ref' && units.every((unit) => unit.group === first.group)) {
    const order = refOrder(units as Units, context);
    return order === undefined ? [] : [order];
  }
  if (units.length === 1) return [unitItem(first, 1, context)];
  return assembleBucket(units, context);
}

function* assembleBucket(units: readonly OrderUnit[], context: AssembleContext): Generator<IngestItem> {
  const groups = new Map<string, Units>();
  for (const unit of units) {
    const group = groups.get(unit.group);
    if (group === undefined) groups.set(unit.group, [unit]);
    else group.push(unit);
  }
  // [first line, the group, which unit of it (-1: the whole group), that unit]
  const plan: [number, Units, number, OrderUnit][] = [];
  for (const group of groups.values()) {
    if (group[0].kind === 'ref') plan.push([firstLine(group[0]), group, -1, group[0]]);
    else group.forEach((unit, i) => plan.push([firstLine(unit), group, i, unit]));
  }
  groups.clear();
  plan.sort((a, b) => a[0] - b[0]);
  for (const [, group, index, unit] of plan) {
    if (index === -1) {
      const order = refOrder(group, context);
      if (order !== undefined) yield order;
    } else yield unitItem(unit, index + 1, context);
  }
}

/** The units of one group: never empty (a group is made with its first unit). */
type Units = [OrderUnit, ...OrderUnit[]];

/** A `hash` unit's order (its `occurrence`-th among identical ones) or a `solo` unit's rejection. */
function unitItem(unit: OrderUnit, occurrence: number, context: AssembleContext): IngestItem {
  if (unit.kind === 'hash')
    return valid(unit.rows, { key: payloadKey(defined(unit.hash, 'the hash of a hash unit'), occurrence) }, context);
  return rejected(unit.rows, [...unit.errors, ...unit.rows.flatMap((r) => r.errors)], {}, context);
}

function firstLine(unit: OrderUnit): number {
  return unit.rows[0]?.line ?? unit.settled?.[0] ?? 0;
}

function refOrder(units: Readonly<Units>, context: AssembleContext): IngestItem | undefined {
  const first = units[0];
  const orderRef = defined(first.orderRef, 'the orderRef of a ref unit');
  // A unit's rows are in line order already (a CSV row, or the product lines of one JSON order).
  const rows = units.length === 1 ? first.rows : inLineOrder(units.flatMap((unit) => unit.rows));
  const errors: RowError[] = units.length === 1 ? [...first.errors] : units.flatMap((unit) => unit.errors);
  // Rows of this order rejected by their own errors and already reported (a file that spills).
  const settled =
    units.length === 1 && first.settled === undefined
      ? []
      : units.flatMap((unit) => unit.settled ?? []).sort((a, b) => a - b);
  const [firstRow] = rows;
  if (firstRow === undefined) return undefined; // every row was reported in the first read

  if (units.length > 1 && units.some((unit) => unit.whole)) {
    const firstLine = first.rows[0]?.line ?? 0;
    for (const unit of units.slice(1)) {
      const line = unit.rows[0]?.line ?? 0;
      errors.push({
        line,
        column: 'orderRef',
        value: orderRef,
        code: 'DUPLICATE_ORDER_REF',
        message: `orderRef '${orderRef}' is also used by the order on line ${firstLine}; each order needs its own orderRef.`,
      });
    }
  }
  if (rows.length > context.maxLinesPerOrder && !errors.some((e) => e.code === 'ORDER_TOO_MANY_LINES')) {
    errors.push({
      line: firstRow.line,
      column: 'orderRef',
      value: orderRef,
      code: 'ORDER_TOO_MANY_LINES',
      message: `orderRef '${orderRef}' has ${rows.length} product lines; at most ${context.maxLinesPerOrder} are accepted.`,
    });
  }
  const strict = context.strictProducts === true;
  if (rows.length > 1)
    errors.push(...recipientMismatches(rows, orderRef), ...(strict ? repeatedProducts(rows, orderRef) : []));
  for (const row of rows) if (row.errors.length > 0) errors.push(...row.errors);
  if (settled.length > 0) errors.push(...notSentWith(rows, settled, orderRef));

  if (errors.length === 0 && rows.every((row) => row.value !== undefined)) {
    const merged = strict ? undefined : mergeRepeatedProducts(rows);
    return valid(rows, { key: defined(first.key, 'the key of a valid ref unit'), orderRef }, context, merged);
  }
  return rejected(rows, errors, { key: units.find((unit) => unit.key !== undefined)?.key, orderRef }, context);
}

/**
 * The other rows of an order whose bad rows were reported during the first read: each is named
 * ORDER_NOT_SENT with the lines that stop it (the rejects file says the same of such rows).
 */
function notSentWith(rows: readonly UnitRow[], settled: readonly number[], orderRef: string): RowError[] {
  const lines = [...new Set(settled)];
  const which = `line${lines.length === 1 ? '' : 's'} ${lines.join(', ')}`;
  const verb = lines.length === 1 ? 'has' : 'have';
  return rows
    .filter((row) => row.errors.length === 0)
    .map((row) => ({
      line: row.line,
      column: 'orderRef',
      value: orderRef,
      code: 'ORDER_NOT_SENT',
      message: `not sent because ${which} of this order (orderRef '${orderRef}') ${verb} errors.`,
    }));
}

/** Rows of one order must name one recipient; each differing field is reported on its line. */
function recipientMismatches(rows: readonly UnitRow[], orderRef: string): RowError[] {
  if (rows.length < 2) return []; // one row agrees with itself
  const reference = rows.find((row) => row.recipient !== undefined);
  if (reference?.recipient === undefined) return [];
  const errors: RowError[] = [];
  for (const row of rows) {
    if (row === reference || row.recipient === undefined) continue;
    for (const field of RECIPIENT_FIELDS) {
      const value = row.recipient[field];
      if (value === reference.recipient[field]) continue;
      errors.push({
        line: row.line,
        column: field,
        value: maskValue(field, value),
        code: 'RECIPIENT_MISMATCH',
        message: `${field} ${describe(field, value, reference.recipient[field])} line ${reference.line}: all rows of orderRef '${orderRef}' must name the same recipient.`,
      });
    }
  }
  return errors;
}

/** Masked personal values look alike ("P***" vs "P***"), so only non-personal ones are quoted. */
function describe(field: string, value: string, reference: string): string {
  if (PERSONAL_FIELDS.has(field)) return 'differs from';
  return `'${maskValue(field, value)}' differs from '${maskValue(field, reference)}' on`;
}

/**
 * The spec does not forbid one product on two lines of an order (a person adding to it later):
 * one line with the summed quantity is what the API gets, and each merged line is noted.
 */
function mergeRepeatedProducts(rows: readonly UnitRow[]): { values: NonNullable<UnitRow['value']>[]; notes: string[] } {
  if (rows.length === 1) return { values: rows.map(valueOf), notes: [] }; // most orders: nothing to merge
  const first = new Map<number, { index: number; line: number; value: NonNullable<UnitRow['value']> }>();
  const values: NonNullable<UnitRow['value']>[] = [];
  const notes: string[] = [];
  for (const row of rows) {
    const value = valueOf(row);
    const earlier = first.get(value.productId);
    if (earlier === undefined) {
      first.set(value.productId, { index: values.length, line: row.line, value });
      values.push(value);
      continue;
    }
    const merged = { ...earlier.value, quantity: earlier.value.quantity + value.quantity };
    values[earlier.index] = earlier.value = merged;
    notes.push(
      rowNote(
        row.line,
        'productId',
        'PRODUCTS_MERGED',
        `productId ${value.productId} is also on line ${earlier.line}: one line sent, quantity ${merged.quantity} (--strict-products refuses this)`,
      ),
    );
  }
  return { values, notes };
}

/** Under --strict-products: the same product twice in one order is refused rather than summed. */
function repeatedProducts(rows: readonly UnitRow[], orderRef: string): RowError[] {
  const seen = new Map<number, number>();
  const errors: RowError[] = [];
  for (const row of rows) {
    const productId = row.value?.productId;
    if (productId === undefined) continue;
    const earlier = seen.get(productId);
    if (earlier === undefined) seen.set(productId, row.line);
    else {
      errors.push({
        line: row.line,
        column: 'productId',
        value: String(productId),
        code: 'DUPLICATE_PRODUCT',
        message: `productId ${productId} is also on line ${earlier} of orderRef '${orderRef}'; put it on one line with the total quantity.`,
      });
    }
  }
  return errors;
}

/** Which order a record is: its ledger key and its orderRef, where it has them. */
interface OrderIdentity<K extends string | undefined> {
  key: K;
  orderRef?: string | undefined;
}

function valid(
  rows: readonly UnitRow[],
  { key, orderRef }: OrderIdentity<string>,
  context: AssembleContext,
  merged?: { values: NonNullable<UnitRow['value']>[]; notes: string[] },
): ValidOrder {
  return {
    kind: 'valid',
    key,
    file: context.file,
    lines: uniqueLines(rows),
    ...(orderRef === undefined ? {} : { orderRef }),
    payload: buildPayload(merged?.values ?? rows.map(valueOf)),
    rows: rows.map((row) => record(context.columns, row.cells)),
    rowLines: rows.map((row) => row.line),
    notes: orderNotes(rows, merged?.notes ?? []),
  };
}

function rejected(
  rows: readonly UnitRow[],
  errors: RowError[],
  { key, orderRef }: Partial<OrderIdentity<string | undefined>>,
  context: AssembleContext,
): RejectedRecord {
  return {
    kind: 'rejected',
    ...(key === undefined ? {} : { key }),
    file: context.file,
    lines: uniqueLines(rows),
    ...(orderRef === undefined ? {} : { orderRef }),
    rows: rows.map((row) => record(context.columns, row.cells)),
    rowLines: rows.map((row) => row.line),
    errors: unique(errors).sort((a, b) => a.line - b.line),
  };
}

/** Product lines of one JSON order share a line and a recipient: report each problem once. */
function unique(errors: readonly RowError[]): RowError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const id = `${e.line}\u0000${e.column ?? ''}\u0000${e.code}\u0000${e.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** The notes of an order's rows and of merging them, each once (product lines of a JSON order share one line). */
function orderNotes(rows: readonly UnitRow[], merged: readonly string[]): string[] {
  if (merged.length === 0 && rows.every((row) => row.notes.length === 0)) return [];
  return [...new Set([...rows.flatMap((row) => row.notes), ...merged])];
}

function uniqueLines(rows: readonly UnitRow[]): number[] {
  // Rows in line order (refOrder sorts them): each line once, without a set and a sort.
  const lines: number[] = [];
  let previous = -Infinity;
  for (const row of rows) {
    if (row.line < previous) return [...new Set(rows.map((r) => r.line))].sort((a, b) => a - b);
    if (row.line !== previous) lines.push(row.line);
    previous = row.line;
  }
  return lines;
}

/**
 * A row's cells under its columns. Copied from one template per column list, so every row object shares one
 * shape made once, instead of growing property by property (a fifth of `validate`'s allocation did).
 */
function record(columns: readonly string[], cells: readonly string[]): Record<string, string> {
  const out = { ...templateOf(columns) };
  let i = 0;
  for (const column of columns) out[column] = cells[i++] ?? '';
  return out;
}

const templates = new WeakMap<readonly string[], Record<string, string>>();

/** An object with `columns`' keys, in order, for record() to copy. */
function templateOf(columns: readonly string[]): Record<string, string> {
  let template = templates.get(columns);
  if (template === undefined) {
    template = {};
    for (const column of columns) template[column] = '';
    templates.set(columns, template);
  }
  return template;
}

/** `rows` sorted by line; as they are when an order's units came in file order (a file read in one stream), unsorted. */
function inLineOrder(rows: UnitRow[]): UnitRow[] {
  let previous = -Infinity;
  for (const row of rows) {
    if (row.line < previous) return rows.sort((a, b) => a.line - b.line);
    previous = row.line;
  }
  return rows;
}

/** The value of a row of a valid order (every row of one has a value). */
function valueOf(row: UnitRow): NonNullable<UnitRow['value']> {
  return defined(row.value, 'the value of a valid row');
}
