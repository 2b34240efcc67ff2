import {
  INTEGER_FIELDS,
  ORDER_FIELDS,
  RECIPIENT_FIELDS,
  normalizedRow,
  recipientRecord,
  type NormalizedRow,
  type OrderField,
  type RecipientField,
} from './orderFields.js';
import type { OrderUnit, UnitRow } from './orderUnit.js';
import type { ColumnPlan } from './resolveColumns.js';
import type { RowError } from './types.js';
import type { UnitCodec } from './unitStore.js';

/**
 * A compact JSON form of a unit for the spill files: arrays instead of objects, nothing that
 * can be derived again (the group key, a valid row's recipient). About half the size of the
 * plain JSON, which is most of the cost of spilling. A normalised row is its values in
 * ORDER_FIELDS order (null for an absent optional one), so the field table drives the codec.
 */
type EncodedRow = [
  line: number,
  cells: string[],
  errors: RowError[] | 0,
  notes: string[] | 0,
  value: NormalizedValue | 0,
  recipient: string[] | 0,
  orderRef: string | null,
  businessCustomerId: string,
];
/**
 * A row whose value, recipient and identity are its cells as written (what the accept path gives:
 * no error, no note, every string value the text of its cell, every number its cell's digits):
 * only the line and the cells are kept, the rest is read back from the cells through the file's
 * column plan. A spill line of the seeded benchmark file is 248 characters instead of 422, so
 * less to encode, write, read and parse.
 */
type PlainRow = [line: number, cells: string[]];
type EncodedUnit = [
  kind: 0 | 1 | 2,
  whole: 0 | 1,
  orderRef: string | null,
  key: string | null,
  hash: string | null,
  errors: RowError[] | 0,
  rows: (EncodedRow | PlainRow)[],
];
type NormalizedValue = (string | number | null)[];

const KINDS = ['ref', 'hash', 'solo'] as const;

/**
 * A stand-in for rows reported during the first read (OrderUnit.settled): only the lines; its group
 * (`r|<businessCustomerId>|<orderRef>`, the orderRef read back from it) is the spill line's prefix,
 * so a file of bad rows spills a few dozen bytes per row.
 */
type EncodedStandIn = [kind: 3, whole: 0 | 1, lines: number[]];

/**
 * The spill codec of a file whose columns are `fieldIndex` (ColumnPlan.fieldIndex): rows whose values are their cells
 * as written travel as PlainRow. Without a field index (a JSON file: its cells are not its values) every row is kept whole.
 */
export function orderUnitCodec(fieldIndex: ColumnPlan['fieldIndex'] = {}): UnitCodec<OrderUnit> {
  const cells = cellLayout(fieldIndex);
  return { encode: (unit) => encodeUnit(unit, cells), decode: (text, group) => decodeUnit(text, group, cells) };
}

/**
 * Where each field's text is among a row's cells (`fields`, in ORDER_FIELDS order), and the recipient's (in
 * RECIPIENT_FIELDS order); undefined when the businessCustomerId or a recipient field has no column (never a plain row).
 */
type CellLayout =
  | {
      fields: readonly { field: OrderField; index: number | undefined; integer: boolean }[];
      recipient: readonly number[];
      businessCustomerId: number;
    }
  | undefined;

function cellLayout(fieldIndex: ColumnPlan['fieldIndex']): CellLayout {
  const recipient = RECIPIENT_FIELDS.map((field) => fieldIndex[field]);
  const businessCustomerId = fieldIndex.businessCustomerId;
  if (businessCustomerId === undefined || !recipient.every((index) => index !== undefined)) return undefined;
  return {
    fields: ORDER_FIELDS.map((field) => ({ field, index: fieldIndex[field], integer: INTEGER_FIELDS.has(field) })),
    recipient,
    businessCustomerId,
  };
}

/** One line of a spill file (no trailing newline); `cells`: see orderUnitCodec. */
export function encodeUnit(unit: OrderUnit, cells?: CellLayout): string {
  if (unit.settled !== undefined) {
    const standIn: EncodedStandIn = [3, unit.whole ? 1 : 0, unit.settled];
    return JSON.stringify(standIn);
  }
  const encoded: EncodedUnit = [
    KINDS.indexOf(unit.kind) as 0 | 1 | 2,
    unit.whole ? 1 : 0,
    unit.orderRef ?? null,
    unit.key ?? null,
    unit.hash ?? null,
    unit.errors.length > 0 ? unit.errors : 0,
    unit.rows.map((row) => (cells !== undefined && isPlain(row, cells) ? [row.line, row.cells] : encodeRow(row))),
  ];
  return JSON.stringify(encoded);
}

function encodeRow(row: UnitRow): EncodedRow {
  const { recipient } = row;
  return [
    row.line,
    row.cells,
    row.errors.length > 0 ? row.errors : 0,
    row.notes.length > 0 ? row.notes : 0,
    row.value === undefined ? 0 : encodeValue(row.value),
    // A valid row's recipient is its normalised value; only invalid rows need theirs kept.
    row.value === undefined && recipient !== undefined ? RECIPIENT_FIELDS.map((field) => recipient[field]) : 0,
    row.identity.orderRef ?? null,
    row.identity.businessCustomerId,
  ];
}

/**
 * Whether decodePlain gives `row` back exactly: no error or note, each value its cell (a number: its cell is the
 * number as String writes it), no value without a cell, the identity its cells.
 */
function isPlain(row: UnitRow, cells: NonNullable<CellLayout>): boolean {
  const value = row.value as Partial<Record<OrderField, string | number>> | undefined;
  if (value === undefined || row.errors.length > 0 || row.notes.length > 0) return false;
  for (const { field, index, integer } of cells.fields) {
    const v = value[field];
    if (index === undefined) {
      if (v !== undefined) return false;
      continue;
    }
    const cell = row.cells[index];
    if (integer ? typeof v !== 'number' || String(v) !== cell : v !== cell) return false;
  }
  const identity = row.identity;
  return (
    identity.businessCustomerId === row.cells[cells.businessCustomerId] &&
    identity.orderRef === value.orderRef &&
    'orderRef' in identity === (identity.orderRef !== undefined)
  );
}

/* eslint-disable @typescript-eslint/no-non-null-assertion -- the layout's indexes are columns of the header these
   cells were read with, and isPlain checked each cell when the row was encoded: a per-row loop of the spill read */
/** The row isPlain said it gives back. */
function decodePlain(
  line: number,
  rowCells: string[],
  cells: NonNullable<CellLayout>,
  withRecipient: boolean,
): UnitRow {
  const values: Partial<Record<OrderField, string | number>> = {};
  for (const { field, index, integer } of cells.fields) {
    if (index === undefined) continue;
    const cell = rowCells[index]!;
    values[field] = integer ? Number(cell) : cell;
  }
  const businessCustomerId = rowCells[cells.businessCustomerId]!;
  const orderRef = values.orderRef as string | undefined;
  const identity = orderRef === undefined ? { businessCustomerId } : { orderRef, businessCustomerId };
  const row: UnitRow = { line, cells: rowCells, errors: [], notes: [], identity, value: normalizedRow(values) };
  if (withRecipient) {
    // A valid row's recipient is its values as text (recipientOf): here, its cells.
    const recipient = {} as Record<RecipientField, string>;
    for (let i = 0; i < RECIPIENT_FIELDS.length; i++) recipient[RECIPIENT_FIELDS[i]!] = rowCells[cells.recipient[i]!]!;
    row.recipient = recipient;
  }
  return row;
}
/* eslint-enable @typescript-eslint/no-non-null-assertion */

/** The unit encodeUnit wrote (with the same `cells`). */
export function decodeUnit(text: string, groupKey?: string, cells?: CellLayout): OrderUnit {
  const parsed = JSON.parse(text) as EncodedUnit | EncodedStandIn;
  if (parsed[0] === 3) {
    if (groupKey === undefined) throw new Error('a stand-in is decoded with its group (the spill line prefix)');
    const [, wholeOrder, lines] = parsed;
    return {
      kind: 'ref',
      group: groupKey,
      whole: wholeOrder === 1,
      orderRef: groupKey.slice(groupKey.indexOf('|', 2) + 1),
      rows: [],
      errors: [],
      settled: lines,
    };
  }
  const [kind, whole, orderRef, key, hash, errors, rows] = parsed;
  const unitKind = KINDS[kind];
  const decodedRows = rows.map((encoded): UnitRow => {
    if (encoded.length === 2) {
      if (cells === undefined) throw new Error('a plain spill row is decoded with its column plan');
      return decodePlain(encoded[0], encoded[1], cells, unitKind === 'ref');
    }
    const [line, rowCells, rowErrors, notes, value, recipient, ref, bcid] = encoded;
    const normalized = value === 0 ? undefined : decodeValue(value);
    const identity = { ...(ref === null ? {} : { orderRef: ref }), businessCustomerId: bcid };
    const row: UnitRow = {
      line,
      cells: rowCells,
      errors: rowErrors === 0 ? [] : rowErrors,
      notes: notes === 0 ? [] : notes,
      identity,
    };
    if (normalized !== undefined) row.value = normalized;
    if (unitKind === 'ref') {
      if (normalized !== undefined) row.recipient = recipientOf(normalized);
      else if (recipient !== 0)
        row.recipient = recipientRecord((field) => recipient[RECIPIENT_FIELDS.indexOf(field)] ?? '');
    }
    return row;
  });
  const first = decodedRows[0];
  let group = `s|${first?.line ?? 0}`;
  if (unitKind === 'ref') group = `r|${first?.identity.businessCustomerId ?? ''}|${orderRef ?? ''}`;
  else if (unitKind === 'hash') group = `h|${hash ?? ''}`;
  return {
    kind: unitKind,
    group,
    whole: whole === 1,
    ...(orderRef === null ? {} : { orderRef }),
    ...(key === null ? {} : { key }),
    ...(hash === null ? {} : { hash }),
    rows: decodedRows,
    errors: errors === 0 ? [] : errors,
  };
}

/** The recipient values validateRow reports for a valid row. */
function recipientOf(value: NormalizedRow): Record<RecipientField, string> {
  return recipientRecord((field) => {
    const v = value[field];
    return v === undefined ? '' : String(v);
  });
}

function encodeValue(v: NormalizedRow): NormalizedValue {
  return ORDER_FIELDS.map((field) => v[field] ?? null);
}

function decodeValue(a: NormalizedValue): NormalizedRow {
  const values: Partial<Record<OrderField, string | number>> = {};
  ORDER_FIELDS.forEach((field, i) => {
    const value = a[i];
    if (value !== null && value !== undefined) values[field] = value;
  });
  return normalizedRow(values);
}
