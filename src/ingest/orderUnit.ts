import { acceptRow } from './acceptRow.js';
import { integerProblem, validateRow, type CheckedRow, type RowRules, type RowText } from './validateRow.js';
import { orderRefKey, payloadHash } from './orderKey.js';
import type { ColumnPlan } from './resolveColumns.js';
import type { CsvBadRecord, CsvRecord } from './readCsvRecords.js';
import { ORDER_FIELDS } from './orderFields.js';
import { fitCells } from './csvCells.js';
import { buildPayload } from './orderShape.js';
import type { RowError } from './types.js';

/** A checked row as it travels between the two passes (and possibly through a temp file). */
export interface UnitRow extends Omit<CheckedRow, 'recipient'> {
  /** Cells in column order, as read (the rejects file and exports write them back). */
  cells: string[];
  /** Only kept for rows that may be grouped with others (orderRef files); absent for unreadable rows. */
  recipient?: CheckedRow['recipient'];
}

/**
 * What one record of the input becomes in the first pass: a CSV row, a flat JSON row, or a
 * whole JSON order (several product lines). Units with the same `group` are assembled together
 * in the second pass.
 */
export interface OrderUnit {
  /**
   * `ref`: rows with the same businessCustomerId + orderRef form one order.
   * `hash`: a valid order without orderRef; equal hashes count occurrences.
   * `solo`: a rejected record without orderRef; it stands alone.
   */
  kind: 'ref' | 'hash' | 'solo';
  group: string;
  /** A complete order from JSON: two of them with one orderRef never merge. */
  whole: boolean;
  orderRef?: string;
  /** For `ref` units whose businessCustomerId is valid. */
  key?: string;
  /** For `hash` units. */
  hash?: string;
  rows: UnitRow[];
  /** Problems with the record as a whole (syntax, unknown fields, no product lines). */
  errors: RowError[];
  /**
   * A stand-in (no rows): start lines of rows of this order that its own errors rejected and that were
   * reported during the first read (settleOrderUnit); the order's other rows are not sent either.
   */
  settled?: number[];
}

/** Turns one CSV record into a unit. */
export function csvUnit(record: CsvRecord | CsvBadRecord, plan: ColumnPlan, rules: RowRules = {}): OrderUnit {
  if (record.kind === 'bad') {
    // Guess the identity from where the columns should be: when the guess holds, the whole
    // order is rejected with this row instead of being sent without one of its product lines.
    const at = (index: number | undefined): string | undefined =>
      index === undefined ? undefined : (record.values[index] ?? '').trim();
    const orderRef = at(plan.fieldIndex.orderRef);
    const identity = {
      ...(orderRef === undefined ? {} : { orderRef }),
      businessCustomerId: at(plan.fieldIndex.businessCustomerId) ?? '',
    };
    const row: UnitRow = {
      line: record.line,
      cells: fitCells(record.values, plan.columns.length),
      errors: [],
      notes: [],
      identity,
    };
    return unitOf([row], false, [{ line: record.line, code: record.code, message: record.message }]);
  }
  const text: RowText = {};
  for (const field of ORDER_FIELDS) {
    const index = plan.fieldIndex[field];
    if (index !== undefined) text[field] = record.values[index] ?? '';
  }
  if (plan.rejectsFile === true && text.orderRef?.trim() === '') delete text.orderRef;
  // The accept path first; validateRow decides (and explains) whatever it is unsure of.
  const checked = acceptRow(record.line, text) ?? validateRow(record.line, text, rules);
  return unitOf([{ ...checked, cells: record.values }], false, []);
}

/**
 * Decides how a unit groups: by orderRef when it has one, by payload hash when it is valid
 * and has none, alone otherwise.
 */
export function unitOf(rows: UnitRow[], whole: boolean, errors: RowError[]): OrderUnit {
  const first = rows[0];
  const orderRef = first?.identity.orderRef;
  if (first !== undefined && orderRef !== undefined && orderRef !== '') {
    const bcid = first.identity.businessCustomerId;
    return {
      kind: 'ref',
      group: `r|${bcid}|${orderRef}`,
      whole,
      orderRef,
      ...(integerProblem(bcid) === undefined ? { key: orderRefKey(Number(bcid), orderRef) } : {}),
      rows,
      errors,
    };
  }
  const lean: UnitRow[] = rows.map(({ recipient: _recipient, ...row }) => row);
  const valid = errors.length === 0 && rows.every((row) => row.value !== undefined);
  if (valid && rows.length > 0) {
    const hash = payloadHash(buildPayload(rows.map((row) => row.value!)));
    return { kind: 'hash', group: `h|${hash}`, whole, hash, rows: lean, errors };
  }
  return { kind: 'solo', group: `s|${first?.line ?? 0}`, whole, rows: lean, errors };
}

/**
 * The errors that reject a unit's rows on their own (the first read judges a file by them): a
 * record-wide error rejects every row of the unit, a row's own error that row. Rows of an order
 * rejected only through another line of it are not counted here.
 */
export function orderUnitErrors(unit: OrderUnit): { rejectedRows: number; errors: readonly RowError[] } {
  if (unit.errors.length > 0)
    return { rejectedRows: unit.rows.length, errors: [...unit.errors, ...unit.rows.flatMap((row) => row.errors)] };
  let rejectedRows = 0;
  const errors: RowError[] = [];
  for (const row of unit.rows) {
    if (row.errors.length === 0) continue;
    rejectedRows++;
    errors.push(...row.errors);
  }
  return { rejectedRows, errors };
}

/**
 * In a file that spills, a unit its own errors reject is reported during the first read, not
 * spilled (a file of bad rows would spill several times its size). What stays behind for the
 * second pass is only what the order's other rows need to be rejected too: a stand-in with the
 * orderRef, the businessCustomerId and the line (`settled`), and only when a valid row could
 * share its order (an unreadable businessCustomerId or orderRef matches no valid row).
 * Undefined for a unit that is not rejected by its own errors.
 */
export function settleOrderUnit(unit: OrderUnit): { standIn?: OrderUnit } | undefined {
  if (orderUnitErrors(unit).rejectedRows === 0) return undefined;
  const identityBroken = unit.rows.some((row) =>
    row.errors.some((e) => e.column === 'orderRef' || e.column === 'businessCustomerId'),
  );
  // The order key exists only for a valid businessCustomerId: without one no valid row can share the group.
  if (unit.kind !== 'ref' || unit.key === undefined || identityBroken) return {};
  const first = unit.rows[0];
  return {
    standIn: {
      kind: 'ref',
      group: unit.group,
      whole: unit.whole,
      ...(unit.orderRef === undefined ? {} : { orderRef: unit.orderRef }),
      rows: [],
      errors: [],
      settled: [first?.line ?? 0],
    },
  };
}
