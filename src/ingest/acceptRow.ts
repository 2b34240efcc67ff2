import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
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
  const values: Partial<Record<OrderField, string | number>> = {};
  for (const check of CHECKS) {
    const raw = text[check.name];
    if (raw === undefined) {
      if (check.optional) continue; // no column: rows are not grouped
      return undefined;
    }
    if (!plainCell(raw)) return undefined;
    const value = check.accept(raw);
    if (value === undefined) return undefined;
    values[check.name] = value;
  }
  const recipient = {} as Record<RecipientField, string>;
  for (const field of RECIPIENT_FIELDS) recipient[field] = String(values[field]);
  // Accepted values are the text as written, so the identity (trimmed text) is the value too.
  const businessCustomerId = text.businessCustomerId!;
  const orderRef = text.orderRef;
  const identity = orderRef === undefined ? { businessCustomerId } : { orderRef, businessCustomerId };
  return { line, errors: [], notes: [], recipient, identity, value: normalizedRow(values) };
}

type Accept = (raw: string) => string | number | undefined;

/** One entry per field of the table, in its order (so values keep validateRow's key order). */
const CHECKS: readonly { name: OrderField; optional: boolean; accept: Accept }[] = ORDER_FIELD_TABLE.map((spec) => ({
  name: spec.name,
  optional: 'optional' in spec,
  accept: acceptorOf(spec.rule),
}));

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
 * Phone numbers seen lately and whether each is valid E.164 as written. A person's number repeats
 * on every product line of their order (and in the next night's file), and the full parse is the
 * most expensive check of a row, so the cheapest checks run first (+ and digits only), then this
 * cache, then libphonenumber. The verdict depends on the text alone, so the key is the text.
 */
const PHONE_CACHE_SIZE = 2048;
let phoneVerdicts = new Map<string, boolean>();
let previousVerdicts = new Map<string, boolean>();

/** True when `raw` is a valid phone number written as E.164 (what the accept path takes); false: ask validateRow. */
export function e164Verdict(raw: string): boolean {
  const length = raw.length;
  if (length < 3 || raw.charCodeAt(0) !== 43 /* + */) return false;
  for (let i = 1; i < length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  let verdict = phoneVerdicts.get(raw);
  if (verdict !== undefined) return verdict;
  verdict = previousVerdicts.get(raw);
  if (verdict === undefined) {
    const parsed = parsePhoneNumberFromString(raw);
    verdict = parsed !== undefined && parsed.isPossible() && parsed.isValid() && parsed.number === raw;
  }
  // Two generations: the last 2,048 to 4,096 numbers, without an LRU's bookkeeping per hit.
  if (phoneVerdicts.size >= PHONE_CACHE_SIZE) {
    previousVerdicts = phoneVerdicts;
    phoneVerdicts = new Map();
  }
  phoneVerdicts.set(raw, verdict);
  return verdict;
}
