import { RECIPIENT_FIELDS } from './orderFields.js';
import type { OrderUnit, UnitRow } from './orderUnit.js';
import type { NormalizedRow, RecipientField } from './validateRow.js';
import type { RowError } from './types.js';

/**
 * A compact JSON form of a unit for the spill files: arrays instead of objects, nothing that
 * can be derived again (the group key, a valid row's recipient). About half the size of the
 * plain JSON, which is most of the cost of spilling.
 */
type EncodedRow = [line: number, cells: string[], errors: RowError[] | 0, notes: string[] | 0, value: NormalizedValue | 0, recipient: string[] | 0, orderRef: string | null, businessCustomerId: string];
type EncodedUnit = [kind: 0 | 1 | 2, whole: 0 | 1, orderRef: string | null, key: string | null, hash: string | null, errors: RowError[] | 0, rows: EncodedRow[]];
type NormalizedValue = [number, string | null, string, string, string, number, string, string, string, string, string, string, number, number];

const KINDS = ['ref', 'hash', 'solo'] as const;

/** One line of a spill file (no trailing newline). */
export function encodeUnit(unit: OrderUnit): string {
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
      row.value === undefined && row.recipient !== undefined ? RECIPIENT_FIELDS.map((field) => row.recipient![field]) : 0,
      row.identity.orderRef ?? null,
      row.identity.businessCustomerId,
    ]),
  ];
  return JSON.stringify(encoded);
}

/** The unit encodeUnit wrote. */
export function decodeUnit(text: string): OrderUnit {
  const [kind, whole, orderRef, key, hash, errors, rows] = JSON.parse(text) as EncodedUnit;
  const unitKind = KINDS[kind];
  const decodedRows = rows.map(([line, cells, rowErrors, notes, value, recipient, ref, bcid]): UnitRow => {
    const normalized = value === 0 ? undefined : decodeValue(value);
    const identity = { ...(ref === null ? {} : { orderRef: ref }), businessCustomerId: bcid };
    const row: UnitRow = { line, cells, errors: rowErrors === 0 ? [] : rowErrors, notes: notes === 0 ? [] : notes, identity };
    if (normalized !== undefined) row.value = normalized;
    if (unitKind === 'ref') {
      if (normalized !== undefined) row.recipient = recipientOf(normalized);
      else if (recipient !== 0) row.recipient = Object.fromEntries(RECIPIENT_FIELDS.map((field, i) => [field, recipient[i] ?? ''])) as Record<RecipientField, string>;
    }
    return row;
  });
  const first = decodedRows[0];
  const group =
    unitKind === 'ref' ? `r|${first?.identity.businessCustomerId ?? ''}|${orderRef ?? ''}` : unitKind === 'hash' ? `h|${hash ?? ''}` : `s|${first?.line ?? 0}`;
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
export function recipientOf(value: NormalizedRow): Record<RecipientField, string> {
  const out = {} as Record<RecipientField, string>;
  for (const field of RECIPIENT_FIELDS) out[field] = String(value[field]);
  return out;
}

function encodeValue(v: NormalizedRow): NormalizedValue {
  return [v.businessCustomerId, v.orderRef ?? null, v.firstName, v.lastName, v.street, v.streetNumber, v.postalCode, v.city, v.countryCode, v.languageCode, v.email, v.telephoneNumber, v.productId, v.quantity];
}

function decodeValue(a: NormalizedValue): NormalizedRow {
  return {
    businessCustomerId: a[0],
    ...(a[1] === null ? {} : { orderRef: a[1] }),
    firstName: a[2],
    lastName: a[3],
    street: a[4],
    streetNumber: a[5],
    postalCode: a[6],
    city: a[7],
    countryCode: a[8],
    languageCode: a[9],
    email: a[10],
    telephoneNumber: a[11],
    productId: a[12],
    quantity: a[13],
  };
}
