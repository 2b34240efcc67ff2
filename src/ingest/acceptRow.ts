import { regexes } from 'zod';
import { isCountryCode, isLanguageCode } from '../reference/isoCodes.js';
import {
  ORDER_FIELD_TABLE,
  RECIPIENT_FIELDS,
  normalizedRow,
  type FieldRule,
  type OrderField,
  type RecipientField,
} from './orderFields.js';
import type { CheckedRow, RowText } from './validateRow.js';
import { validE164 } from './phoneVerdicts.js';

/**
 * The accept path of a row: says yes, cheaply, to a row validateRow would accept exactly as
 * written (no error, no note), and returns the same CheckedRow validateRow would. It never says
 * no: anything it is unsure of (a value to trim, a leading zero, lower-case country, a phone with
 * spaces, a possible-but-unknown number, a 16-digit id, an apostrophe or `=` in front) gives
 * `undefined`, and the caller asks validateRow, which stays the description of a valid row and
 * explains a row that fails. test/ingest/acceptRow.test.ts holds the two equal over generated rows.
 *
 * Built from ORDER_FIELD_TABLE: one check per rule, no closures, notes or error arrays per row;
 * the only objects made are the ones a CheckedRow holds.
 */
export function acceptRow(line: number, text: RowText): CheckedRow | undefined {
  const cells = CHECKS.map((check) => text[check.name]);
  return acceptCells(
    line,
    cells,
    Int32Array.from(cells, (cell, i) => (cell === undefined ? -1 : i)),
  );
}

/* eslint-disable @typescript-eslint/no-non-null-assertion -- `columns` has one entry per CHECKS row (columnsOf);
   RECIPIENT_AT and BCID_AT index CHECKS, whose loop accepted those cells first. Indexes, not iterators: a per-row loop */
/**
 * acceptRow for the cells of a CSV record: `columns[i]` is the cell index of ORDER_FIELD_TABLE's i-th field,
 * -1 without a column (columnsOf makes it once per file). No per-row text object is made.
 */
export function acceptCells(
  line: number,
  cells: readonly (string | undefined)[],
  columns: Int32Array,
): CheckedRow | undefined {
  const values = { ...valuesTemplate(columns) };
  for (let i = 0; i < CHECKS.length; i++) {
    const check = CHECKS[i]!;
    const column = columns[i]!;
    const raw = column === -1 ? undefined : (cells[column] ?? '');
    if (raw === undefined) {
      if (check.optional) continue; // no column: rows are not grouped
      return undefined;
    }
    if (!plainCell(raw)) return undefined;
    const value = check.accept(raw);
    if (value === undefined) return undefined;
    values[check.name] = value;
  }
  // Accepted values are the text as written (an integer is written as Number writes it), so the
  // recipient to compare and the identity (trimmed text) are the text too.
  const recipient = { ...RECIPIENT_TEMPLATE };
  for (let i = 0; i < RECIPIENT_CHECKS.length; i++) {
    const field = RECIPIENT_CHECKS[i]!;
    recipient[field] = cells[columns[RECIPIENT_AT[i]!]!]!;
  }
  const businessCustomerId = cells[columns[BCID_AT]!]!;
  const orderRef = columns[REF_AT] === -1 ? undefined : cells[columns[REF_AT]!];
  const identity = orderRef === undefined ? { businessCustomerId } : { orderRef, businessCustomerId };
  return { line, errors: NO_ERRORS, notes: NO_NOTES, recipient, identity, value: normalizedRow(values) };
}
/* eslint-enable @typescript-eslint/no-non-null-assertion */

/**
 * The keys an accepted row's values have in a file of these columns, in CHECKS' order, for acceptCells to copy:
 * every row then shares one object shape made once, instead of growing property by property.
 */
function valuesTemplate(columns: Int32Array): Partial<Record<OrderField, string | number>> {
  let template = templates.get(columns);
  if (template === undefined) {
    template = {};
    for (const [i, check] of CHECKS.entries()) if (columns[i] !== -1) template[check.name] = check.number ? 0 : '';
    templates.set(columns, template);
  }
  return template;
}

const templates = new WeakMap<Int32Array, Partial<Record<OrderField, string | number>>>();

/** The cell index of each ORDER_FIELD_TABLE field in a file of these columns (acceptCells), -1 for none. */
export function columnsOf(fieldIndex: Partial<Record<string, number>>): Int32Array {
  return Int32Array.from(CHECKS, (check) => fieldIndex[check.name] ?? -1);
}

/** An accepted row has no errors and no notes: one shared, frozen empty list of each (nothing adds to a row's). */
const NO_ERRORS = Object.freeze([]) as unknown as CheckedRow['errors'];
const NO_NOTES = Object.freeze([]) as unknown as CheckedRow['notes'];

type Accept = (raw: string) => string | number | undefined;

/** One entry per field of the table, in its order (so values keep validateRow's key order). */
const CHECKS: readonly { name: OrderField; optional: boolean; number: boolean; accept: Accept }[] =
  ORDER_FIELD_TABLE.map((spec) => ({
    name: spec.name,
    optional: 'optional' in spec,
    number: spec.rule === 'integer' || spec.rule === 'houseNumber',
    accept: acceptorOf(spec.rule),
  }));

const RECIPIENT_CHECKS: readonly RecipientField[] = RECIPIENT_FIELDS;
/** An accepted row's recipient, for acceptCells to copy (one shape for every row). */
const RECIPIENT_TEMPLATE = {} as Record<RecipientField, string>;
for (const field of RECIPIENT_FIELDS) RECIPIENT_TEMPLATE[field] = '';
const RECIPIENT_AT = RECIPIENT_FIELDS.map((field) => CHECKS.findIndex((check) => check.name === field));
const BCID_AT = CHECKS.findIndex((check) => check.name === 'businessCustomerId');
const REF_AT = CHECKS.findIndex((check) => check.name === 'orderRef');

function acceptorOf(rule: FieldRule): Accept {
  switch (rule) {
    case 'reference':
      return (raw) => (raw !== '' && noControl(raw) ? raw : undefined);
    case 'integer':
    case 'houseNumber':
      return plainInteger;
    case 'text':
      return (raw) => (plainText(raw) ? raw : undefined);
    case 'country':
      return (raw) => (isCountryCode(raw) ? raw : undefined);
    case 'language':
      return (raw) => (isLanguageCode(raw) ? raw : undefined);
    case 'email':
      // zod's own pattern (what z.email() tests); it admits no , or ; so "one address" holds too.
      return (raw) => (regexes.email.test(raw) ? raw : undefined);
    case 'phone':
      return (raw) => (e164Verdict(raw) ? raw : undefined);
  }
}

const NEUTRALIZED = /^'[=+\-@\t\r]/;

/**
 * What validateRow's `read` leaves as written: no spaces around it, no apostrophe a rejects file
 * put in front, no Excel `="..."` (anything starting with `=` is left to validateRow).
 */
function plainCell(raw: string): boolean {
  if (raw.length === 0) return true;
  const first = raw.charCodeAt(0);
  if (first === 61 /* = */) return false;
  if (first === 39 /* ' */ && NEUTRALIZED.test(raw)) return false;
  return raw.trim() === raw;
}

/** 1 to 15 digits without a leading zero: always a safe integer, written as Number writes it. */
function plainInteger(raw: string): number | undefined {
  const length = raw.length;
  if (length === 0 || length > 15 || raw.charCodeAt(0) === 48 /* 0 */) return undefined;
  for (let i = 0; i < length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  return Number(raw);
}

/** No C0 control (line breaks included), DEL, C1 control or U+FFFD: textProblem's checks past the formula. */
function noControl(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f) || c === 0xfffd) return false;
  }
  return true;
}

/** Free text textProblem has nothing to say about: not empty, not starting like a formula (= + - @), clean. */
function plainText(raw: string): boolean {
  if (raw === '') return false;
  const first = raw.charCodeAt(0);
  if (first === 61 || first === 43 || first === 45 || first === 64) return false; // = + - @: FORMULA's first characters
  return noControl(raw);
}

/**
 * True when `raw` is a valid phone number written as E.164 (what the accept path takes); false: ask validateRow.
 * The cheapest checks first (+ and digits only), then the verdicts kept by calling code, length and leading
 * digits (phoneVerdicts.ts: libphonenumber's own, asked once for all numbers that go through it alike).
 */
export function e164Verdict(raw: string): boolean {
  const length = raw.length;
  if (length < 3 || raw.charCodeAt(0) !== 43 /* + */) return false;
  for (let i = 1; i < length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return validE164(raw);
}
