import { fitCells, wholeRecordCell } from './csvCells.js';
import type { ColumnPlan } from './resolveColumns.js';
import { fieldForName, normalizeHeader } from './resolveColumns.js';
import type { CsvBadRecord, CsvRecord } from './readCsvRecords.js';
import { jsonKind, syntaxMessage, type JsonOversize, type JsonRecord } from './readJsonRecords.js';
import type { JsonUnitContext } from './openRecordSource.js';
import type { RowErrorCode } from '../errorCodes.js';
import type { RowError } from './types.js';
import { ACCOUNT_COLUMNS, ACCOUNT_FIELDS, type AccountPayload } from './accountColumns.js';
import { accountKey } from './accountKey.js';
import { validateAccountRow, type AccountText } from './validateAccountRow.js';

/** One employee row after the first pass. */
export interface AccountRow {
  line: number;
  /** Cells in column order, as read (the rejects file writes them back). */
  cells: string[];
  /** Present only when the row has no errors. */
  value?: AccountPayload;
  errors: RowError[];
  notes: string[];
}

/**
 * What one record of an employee file becomes in the first pass. Rows of one employee
 * (companyId + email) share a group, so a second row of the same employee is found wherever
 * it is in the file, through the same bucketed store as orders.
 */
export interface AccountUnit {
  /** `k|<account key>` when the identity is readable, else `s|<line>` (stands alone). */
  group: string;
  key?: string;
  /** Always one row: an account is one row. */
  rows: [AccountRow];
}

/** Turns one CSV record of an employee file into a unit. */
export function accountCsvUnit(record: CsvRecord | CsvBadRecord, plan: ColumnPlan): AccountUnit {
  if (record.kind === 'bad')
    return lone(record.line, fitCells(record.values, plan.columns.length), record.code, record.message);
  const text: AccountText = {};
  for (const field of ACCOUNT_FIELDS) {
    const index = plan.fieldIndex[field];
    if (index !== undefined) text[field] = record.values[index] ?? '';
  }
  return unitOf(record.line, record.values, text, []);
}

/**
 * Turns one JSON element (or NDJSON line) into a unit. Accounts are flat in the API's own
 * shape, so an element is read like a CSV row: keys matched as headers (and through --map),
 * other keys left out and reported. Cells are in ACCOUNT_FIELDS order.
 */
export function accountJsonUnit(record: JsonRecord | JsonOversize, context: JsonUnitContext): AccountUnit {
  const empty = ACCOUNT_FIELDS.map(() => '');
  if (record.kind === 'oversize')
    return lone(
      record.line,
      empty,
      'RECORD_TOO_LARGE',
      'this element is longer than the record-size cap; it was skipped unread.',
    );
  let value: unknown;
  try {
    value = JSON.parse(record.text);
  } catch (error) {
    const kept = [wholeRecordCell(record.text), ...empty.slice(1)];
    return lone(record.line, kept, 'JSON_SYNTAX', syntaxMessage(error));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return lone(record.line, empty, 'NOT_AN_ACCOUNT', `expected an account object, found ${jsonKind(value)}.`);
  }
  const text: AccountText = {};
  const typeErrors: RowError[] = [];
  for (const [key, raw] of Object.entries(value)) {
    const mapped = context.mapping.get(normalizeHeader(key));
    const field = (mapped === undefined ? fieldForName(key, ACCOUNT_COLUMNS) : mapped) as
      (typeof ACCOUNT_FIELDS)[number] | null | undefined;
    if (field === undefined || field === null || field in text) {
      if (mapped !== null) context.ignored.add(key);
      continue;
    }
    if (raw === undefined || raw === null) text[field] = '';
    else if (typeof raw === 'string') text[field] = raw;
    else {
      // Every account field is a string in the API's shape; a number or object here is a mistake upstream.
      text[field] = typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
      typeErrors.push({
        line: record.line,
        column: field,
        code: 'FIELD_TYPE',
        message: `${field} must be a JSON string in the API's account shape, not ${JSON.stringify(raw)}.`,
      });
    }
  }
  return unitOf(
    record.line,
    ACCOUNT_FIELDS.map((field) => text[field] ?? ''),
    text,
    typeErrors,
  );
}

function unitOf(line: number, cells: string[], text: AccountText, typeErrors: RowError[]): AccountUnit {
  const checked = validateAccountRow(line, text);
  const typed = new Set(typeErrors.map((e) => e.column));
  const errors = [...typeErrors, ...checked.errors.filter((e) => !typed.has(e.column))];
  const row: AccountRow = {
    line,
    cells,
    errors,
    notes: checked.notes,
    ...(errors.length === 0 && checked.value !== undefined ? { value: checked.value } : {}),
  };
  if (checked.identity === undefined) return { group: `s|${line}`, rows: [row] };
  const key = accountKey(checked.identity.companyId, checked.identity.email);
  return { group: `k|${key}`, key, rows: [row] };
}

function lone(line: number, cells: string[], code: RowErrorCode, message: string): AccountUnit {
  return { group: `s|${line}`, rows: [{ line, cells, errors: [{ line, code, message }], notes: [] }] };
}

/** The errors that reject an account's row on its own (the first read judges a file by them). */
export function accountUnitErrors(unit: AccountUnit): { rejectedRows: number; errors: readonly RowError[] } {
  const errors = unit.rows[0].errors;
  return { rejectedRows: errors.length > 0 ? 1 : 0, errors };
}
