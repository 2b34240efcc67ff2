import { acceptCells, columnsOf } from './acceptRow.js';
import { integerProblem, validateRow, type CheckedRow, type RowRules, type RowText } from './validateRow.js';
import { orderRefKey, payloadHash } from './orderKey.js';
import type { ColumnPlan } from './resolveColumns.js';
import type { CsvBadRecord, CsvRecord } from './readCsvRecords.js';
import { ORDER_FIELDS } from './orderFields.js';
import { fitCells } from './csvCells.js';
import { buildPayload } from './orderShape.js';
import type { RowError } from './types.js';
import type { ShapeKey } from './shapeScan.js';
import { defined } from '../errors.js';

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
  // The accept path straight from the cells; validateRow decides (and explains) whatever it is unsure of.
  const plain = cellColumns(plan);
  const blankRef = plan.rejectsFile === true && (record.values[plan.fieldIndex.orderRef ?? -1] ?? '').trim() === '';
  const accepted = acceptCells(record.line, record.values, blankRef ? plain.withoutRef : plain.all);
  const row = (accepted ?? validateRow(record.line, rowText(record.values, plan, blankRef), rules)) as UnitRow;
  row.cells = record.values;
  return unitOf([row], false, []);
}

/** acceptCells' column indexes for a plan, made once per plan. */
const columnsByPlan = new WeakMap<ColumnPlan, { all: Int32Array; withoutRef: Int32Array }>();

function cellColumns(plan: ColumnPlan): { all: Int32Array; withoutRef: Int32Array } {
  let columns = columnsByPlan.get(plan);
  if (columns === undefined) {
    const { orderRef: _orderRef, ...withoutRef } = plan.fieldIndex;
    columns = { all: columnsOf(plan.fieldIndex), withoutRef: columnsOf(withoutRef) };
    columnsByPlan.set(plan, columns);
  }
  return columns;
}

/** A row's fields as text for validateRow; an empty orderRef of a rejects file read back is no orderRef. */
function rowText(values: readonly string[], plan: ColumnPlan, blankRef: boolean): RowText {
  const text: RowText = {};
  for (const field of ORDER_FIELDS) {
    const index = plan.fieldIndex[field];
    if (index !== undefined) text[field] = values[index] ?? '';
  }
  if (blankRef) delete text.orderRef;
  return text;
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
  const values = rows.flatMap((row) => (row.value === undefined ? [] : [row.value]));
  if (errors.length === 0 && rows.length > 0 && values.length === rows.length) {
    const hash = payloadHash(buildPayload(values));
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

const LOOSE_ALL = /[\s,'"=]/g;

/**
 * A cell without anything reading may drop or add before it groups a row: white space and line breaks
 * (trimmed, joined with ", "), commas, quotes, apostrophes and `=` (Excel's ="..." and the rejects
 * file's ' taken off), and leading zeros (00079 is 79). Two cells that read the same stay the same here.
 */
export function looseCell(cell: string | undefined): string {
  if (cell === undefined) return '';
  let text = plainCell(cell) ? cell : cell.replace(LOOSE_ALL, '');
  if (text.charCodeAt(0) === 48 /* 0 */) text = text.replace(/^0+/, '');
  return text;
}

/** No character looseCell drops: printable ASCII other than space , ' " = (anything else takes the regular expression). */
function plainCell(cell: string): boolean {
  for (let i = 0; i < cell.length; i++) {
    const c = cell.charCodeAt(i);
    if (c <= 32 || c > 126 || c === 44 || c === 39 || c === 34 || c === 61) return false;
  }
  return true;
}

/** Fields that identify an order without orderRef well enough, all read as written or as an integer. */
const CONTENT_KEY_FIELDS = ['businessCustomerId', 'firstName', 'lastName', 'email', 'productId', 'quantity'] as const;

/**
 * How order rows group, from their cells before any check (the shape scan of a large CSV): by the
 * loose businessCustomerId and orderRef (unitOf's `ref` groups), or without an orderRef column by a
 * loose part of the content (identical orders, `hash` groups, have it equal). A row with an empty
 * orderRef, or without orderRef an empty businessCustomerId, is rejected on its own and stands alone.
 * Undefined for a rejects file read back: there an empty orderRef groups by content.
 */
export function orderShapeKey(plan: ColumnPlan): ShapeKey | undefined {
  if (plan.rejectsFile === true) return undefined;
  const index = plan.fieldIndex;
  const bcid = index.businessCustomerId;
  if (bcid === undefined) return undefined;
  const ref = index.orderRef;
  if (ref !== undefined) {
    const fields = [bcid, ref].sort((a, b) => a - b);
    const bcidAt = fields.indexOf(bcid);
    const refAt = fields.indexOf(ref);
    if (bcidAt === refAt) return undefined; // one column mapped twice: left to the spill path
    return {
      fields,
      pair: { first: bcidAt, second: refAt },
      key(cells) {
        const orderRef = cells[refAt];
        if (orderRef === undefined || orderRef.trim() === '') return undefined;
        return `${looseCell(cells[bcidAt])}\u0001${looseCell(orderRef)}`;
      },
    };
  }
  const columns = CONTENT_KEY_FIELDS.map((field) => index[field]);
  if (columns.some((column) => column === undefined)) return undefined;
  const fields = [...new Set(columns as number[])].sort((a, b) => a - b);
  const at = (columns as number[]).map((column) => fields.indexOf(column));
  const firstAt = defined(at[0], 'the first content-key column');
  return {
    fields,
    key(cells) {
      if (looseCell(cells[firstAt]) === '') return undefined;
      return at.map((i) => looseCell(cells[i])).join('\u0001');
    },
  };
}
