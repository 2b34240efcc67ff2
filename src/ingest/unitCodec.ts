import {
  ORDER_FIELDS,
  RECIPIENT_FIELDS,
  normalizedRow,
  recipientRecord,
  type NormalizedRow,
  type OrderField,
  type RecipientField,
} from './orderFields.js';
import type { OrderUnit, UnitRow } from './orderUnit.js';
import type { RowError } from './types.js';

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
type EncodedUnit = [
  kind: 0 | 1 | 2,
  whole: 0 | 1,
  orderRef: string | null,
  key: string | null,
  hash: string | null,
  errors: RowError[] | 0,
  rows: EncodedRow[],
];
type NormalizedValue = (string | number | null)[];

const KINDS = ['ref', 'hash', 'solo'] as const;

/**
 * A stand-in for rows reported during the first read (OrderUnit.settled): only the lines; its group
 * (`r|<businessCustomerId>|<orderRef>`, the orderRef read back from it) is the spill line's prefix,
 * so a file of bad rows spills a few dozen bytes per row.
 */
type EncodedStandIn = [kind: 3, whole: 0 | 1, lines: number[]];

/** One line of a spill file (no trailing newline). */
export function encodeUnit(unit: OrderUnit): string {
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
    unit.rows.map((row) => [
      row.line,
      row.cells,
      row.errors.length > 0 ? row.errors : 0,
      row.notes.length > 0 ? row.notes : 0,
      row.value === undefined ? 0 : encodeValue(row.value),
      // A valid row's recipient is its normalised value; only invalid rows need theirs kept.
      row.value === undefined && row.recipient !== undefined
        ? RECIPIENT_FIELDS.map((field) => row.recipient![field])
        : 0,
      row.identity.orderRef ?? null,
      row.identity.businessCustomerId,
    ]),
  ];
  return JSON.stringify(encoded);
}

/** The unit encodeUnit wrote. */
export function decodeUnit(text: string, groupKey?: string): OrderUnit {
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
  const decodedRows = rows.map(([line, cells, rowErrors, notes, value, recipient, ref, bcid]): UnitRow => {
    const normalized = value === 0 ? undefined : decodeValue(value);
    const identity = { ...(ref === null ? {} : { orderRef: ref }), businessCustomerId: bcid };
    const row: UnitRow = {
      line,
      cells,
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
  const group =
    unitKind === 'ref'
      ? `r|${first?.identity.businessCustomerId ?? ''}|${orderRef ?? ''}`
      : unitKind === 'hash'
        ? `h|${hash ?? ''}`
        : `s|${first?.line ?? 0}`;
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
