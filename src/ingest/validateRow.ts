import { parsePhoneNumberFromString, getCountryCallingCode, type CountryCode } from 'libphonenumber-js/max';
import { isCountryCode } from '../reference/isoCodes.js';
import { isNeutralizedCell } from './csvCells.js';
import { emailProblem, languageCode, textProblem } from './textChecks.js';
import { maskValue } from './maskValue.js';
import {
  ORDER_FIELD_TABLE,
  normalizedRow,
  recipientRecord as recipientFields,
  type FieldRule,
  type NormalizedRow,
  type OrderField,
  type RecipientField,
} from './orderFields.js';
import type { RowErrorCode } from '../errorCodes.js';
import { rowNote } from './rowNotes.js';
import type { RowError } from './types.js';

/** Rules a person can tighten with a flag (see src/commands/options.ts, withReadingOptions). */
export interface RowRules {
  /** Refuse phone numbers that are possible for their country but not known to be in use (`--strict-phone`). */
  strictPhone?: boolean;
}

/** A row's fields as text (after column mapping). `undefined`: the field has no column/key. */
export type RowText = Partial<Record<OrderField, string>>;

/** The result of checking one row: every problem, not only the first. */
export interface CheckedRow {
  line: number;
  /** Present only when `errors` is empty. */
  value?: NormalizedRow;
  errors: RowError[];
  /** Normalisations applied, e.g. "line 7: countryCode 'nl' -> 'NL'". */
  notes: string[];
  /** Recipient values to compare between rows of one order: normalised when valid, else trimmed text. */
  recipient: Record<RecipientField, string>;
  /** What groups the row, as written (trimmed), even when invalid. orderRef is absent without a column. */
  identity: { orderRef?: string; businessCustomerId: string };
}

/**
 * Checks one flat row against the Business API's order shape. It refuses only what cannot be
 * right; every normalisation is reported in `notes`: trimming, line breaks inside a text joined
 * with ", ", leading zeros of a number, the case of country and language codes, E.164 spacing
 * of phone numbers, removing the apostrophe the rejects file puts before cells that start with
 * = + - @, and a phone number that is possible but unknown (PHONE_UNVERIFIED; refused with
 * `rules.strictPhone`).
 */
export function validateRow(line: number, text: RowText, rules: RowRules = {}): CheckedRow {
  const row = new RowCheck(line, text, rules);
  // One pass in table order, so errors and notes come out in field order. A country checked
  // earlier in the row serves the phone number's example.
  const raws: Partial<Record<OrderField, string>> = {};
  const values: Partial<Record<OrderField, string | number>> = {};
  for (const spec of ORDER_FIELD_TABLE) {
    const { name: field, rule } = spec;
    if ('optional' in spec && text[field] === undefined) continue; // no column (without orderRef: rows are not grouped)
    const raw = row.read(field);
    raws[field] = raw;
    const value = row.check(field, rule, raw);
    if (rule === 'country') row.country = value === undefined ? undefined : String(value);
    if (value !== undefined) values[field] = value;
  }

  // Recipient values to compare between rows: normalised when valid, else as written.
  const recipient: Record<RecipientField, string> = recipientFields((field) => {
    const value = values[field];
    return value === undefined ? (raws[field] ?? '') : String(value);
  });
  const orderRef = raws.orderRef;
  // The normalised id when valid, so "001001" groups with "1001".
  const bcid =
    values.businessCustomerId === undefined ? (raws.businessCustomerId ?? '') : String(values.businessCustomerId);
  const identity = { ...(orderRef === undefined ? {} : { orderRef }), businessCustomerId: bcid };
  const { errors, notes } = row;
  if (errors.length > 0) return { line, errors, notes, recipient, identity };
  return { line, errors, notes, recipient, identity, value: normalizedRow(values) };
}

/** One row's checks: the problems and notes they find, by field. */
class RowCheck {
  readonly errors: RowError[] = [];
  readonly notes: string[] = [];
  /** The row's country once checked, for the phone number's example. */
  country: string | undefined;

  constructor(
    readonly line: number,
    private readonly text: RowText,
    private readonly rules: RowRules,
  ) {}

  fail(field: OrderField, raw: string, code: RowErrorCode, message: string): void {
    const shown = maskValue(field, raw);
    this.errors.push({
      line: this.line,
      column: field,
      value: shown,
      code,
      message: `${field}${raw === '' ? '' : ` '${shown}'`} ${message}`,
    });
  }

  read(field: OrderField): string {
    const { line, notes } = this;
    const written = this.text[field] ?? '';
    let value = written.trim();
    if (value !== written) notes.push(rowNote(line, field, 'TRIMMED', 'spaces around the value removed'));
    if (isNeutralizedCell(value)) {
      value = value.slice(1);
      notes.push(`line ${line}: ${field}: removed the leading apostrophe that protects spreadsheet cells`);
    }
    // Excel's way to keep a leading + or 0: the formula ="+31612345678" (inner quotes doubled).
    const formula = /^="((?:[^"]|"")*)"$/s.exec(value);
    if (formula !== null) {
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- group 1 is not optional: a match has it
      value = formula[1]!.replaceAll('""', '"').trim();
      notes.push(rowNote(line, field, 'EXCEL_TEXT_UNWRAPPED', `="..." read as the text inside`));
    }
    return value;
  }

  check(field: OrderField, rule: FieldRule, raw: string): string | number | undefined {
    switch (rule) {
      case 'reference':
        this.reference(field, raw);
        return raw;
      case 'integer':
      case 'houseNumber':
        return this.integer(field, raw, rule);
      case 'text': {
        const joined = this.joinLineBreaks(field, raw);
        const problem = textProblem(joined);
        if (problem !== undefined) this.fail(field, joined, problem.code, problem.message);
        return joined;
      }
      case 'country':
        return this.code(field, raw, 'upper');
      case 'language':
        return this.code(field, raw, 'lower');
      case 'email': {
        const problem = emailProblem(raw);
        if (problem !== undefined) this.fail(field, raw, problem.code, problem.message);
        return raw;
      }
      case 'phone':
        return this.phone(field, raw);
    }
  }

  private reference(field: OrderField, raw: string): void {
    if (raw === '') {
      this.fail(
        field,
        '',
        'ORDER_REF_MISSING',
        'is empty. This file groups rows into orders by orderRef, so every row needs one (or leave the column out: then each row is one order).',
      );
    } else if (/[\u0000-\u001f\u007f]/.test(raw))
      this.fail(field, raw, 'CONTROL_CHARACTER', 'contains a control character.');
  }

  private integer(field: OrderField, written: string, rule: FieldRule): number | undefined {
    let raw = written;
    if (/^0+[1-9]\d*$/.test(raw)) {
      // A spreadsheet's zero padding (00079): the number is plain, only its writing is not.
      raw = raw.replace(/^0+/, '');
      this.notes.push(rowNote(this.line, field, 'LEADING_ZEROS', `'${written}' read as ${raw}`));
    }
    const problem = integerProblem(raw);
    if (problem === undefined) return Number(raw);
    if (rule === 'houseNumber' && problem.code === 'INTEGER_INVALID' && /^\d+\s*[-/]?\s*[\p{L}\d]/u.test(raw)) {
      this.fail(
        field,
        raw,
        'STREET_NUMBER_ADDITION',
        'has an addition: the API takes the street number as an integer, so a house number like 12a, 12-2 or 12 bis cannot be sent as written. Check with the recipient or the service operator how to address it.',
      );
    } else this.fail(field, raw, problem.code, problem.message);
    return undefined;
  }

  // Address line 2 in a quoted cell ("Rue de la Paix\nBâtiment B"), as many shops export it.
  private joinLineBreaks(field: OrderField, raw: string): string {
    if (!/[\r\n]/.test(raw)) return raw;
    this.notes.push(rowNote(this.line, field, 'LINE_BREAKS_JOINED', 'line breaks inside the text joined with ", "'));
    return raw
      .split(/\r\n|\r|\n/)
      .map((part) => part.trim().replace(/,$/, '').trim())
      .filter((part) => part !== '')
      .join(', ');
  }

  private code(field: OrderField, raw: string, cased: 'upper' | 'lower'): string | undefined {
    const { line, notes } = this;
    const fail = this.fail.bind(this);
    if (cased === 'lower') {
      const checked = languageCode(raw);
      if ('problem' in checked) fail(field, raw, checked.problem.code, checked.problem.message);
      else if (checked.value !== raw) notes.push(`line ${line}: ${field} '${raw}' -> '${checked.value}'`);
      return 'value' in checked ? checked.value : undefined;
    }
    if (raw === '') {
      fail(field, raw, 'FIELD_REQUIRED', 'is empty; it is required.');
      return undefined;
    }
    if (isCountryCode(raw)) return raw;
    const recased = cased === 'upper' ? raw.toUpperCase() : raw.toLowerCase();
    if (isCountryCode(recased)) {
      notes.push(`line ${line}: ${field} '${raw}' -> '${recased}'`);
      return recased;
    }
    let hint = '';
    if (recased === 'UK') hint = ' The United Kingdom is GB.';
    else if (recased.length === 3) hint = ' Use the two-letter code (NL, not NLD).';
    fail(
      field,
      raw,
      'COUNTRY_CODE_INVALID',
      `is not an ISO 3166-1 two-letter country code such as NL, BE or DE.${hint}`,
    );
    return undefined;
  }

  private phone(field: OrderField, raw: string): string | undefined {
    const { line, notes, rules, country: countryCode } = this;
    const fail = this.fail.bind(this);
    if (raw === '') {
      fail(field, raw, 'FIELD_REQUIRED', 'is empty; it is required.');
      return undefined;
    }
    if (raw.startsWith('00')) {
      fail(field, raw, 'PHONE_NOT_INTERNATIONAL', 'starts with 00; write + instead (e.g. +31 6 ..., not 0031 6 ...).');
      return undefined;
    }
    if (!raw.startsWith('+')) {
      let example = '';
      if (countryCode !== undefined) {
        try {
          example = ` For ${countryCode}: +${getCountryCallingCode(countryCode as CountryCode)}, dropping the leading 0.`;
        } catch {
          // a country without a calling code in the metadata (e.g. AQ): no example
        }
      }
      fail(field, raw, 'PHONE_NOT_INTERNATIONAL', `must be international: + and the country code first.${example}`);
      return undefined;
    }
    // Digits and the usual punctuation only: the library would read letters as a phone keypad.
    const parsed = /^\+[\d\s()./-]+$/.test(raw) ? parsePhoneNumberFromString(raw) : undefined;
    // Refuse only what cannot be right: a length or prefix impossible for the country the calling
    // code names. Numbers newer than the library's metadata are possible but not "valid".
    if (parsed === undefined || !parsed.isPossible()) {
      fail(
        field,
        raw,
        'PHONE_INVALID',
        'cannot be a phone number of the country its calling code names (check the country code and the number of digits).',
      );
      return undefined;
    }
    if (!parsed.isValid()) {
      const where = parsed.country ?? `+${parsed.countryCallingCode}`;
      if (rules.strictPhone === true) {
        fail(
          field,
          raw,
          'PHONE_UNVERIFIED',
          `is possible for ${where} but not a number range known to be in use; --strict-phone refuses it. Check it with the recipient, or import without --strict-phone.`,
        );
        return undefined;
      }
      notes.push(
        rowNote(
          line,
          field,
          'PHONE_UNVERIFIED',
          `possible for ${where} but not a number range known to be in use; sent as written, check it if the delivery fails`,
        ),
      );
    }
    if (parsed.number !== raw) notes.push(`line ${line}: ${field} written as E.164 (spaces and punctuation removed)`);
    return parsed.number;
  }
}

/**
 * Strict integers from text: plain digits, no sign, no leading zero, no exponent, no
 * fraction, no hex, at least 1 and at most 2^53-1 (larger ones do not survive JSON).
 */
export function integerProblem(raw: string): { code: RowErrorCode; message: string } | undefined {
  if (/^[1-9]\d*$/.test(raw)) {
    return Number.isSafeInteger(Number(raw))
      ? undefined
      : { code: 'INTEGER_TOO_LARGE', message: `is larger than ${Number.MAX_SAFE_INTEGER}.` };
  }
  if (raw === '') return { code: 'FIELD_REQUIRED', message: 'is empty; it is required.' };
  if (/^-\d+$/.test(raw) || /^0+$/.test(raw)) return { code: 'INTEGER_NOT_POSITIVE', message: 'must be 1 or more.' };
  if (/^0\d+$/.test(raw))
    return { code: 'INTEGER_INVALID', message: 'has a leading zero; write the number without it.' };
  if (/^\+\d+$/.test(raw)) return { code: 'INTEGER_INVALID', message: 'has a + sign; write just the digits.' };
  if (/^0x[\da-f]+$/i.test(raw))
    return { code: 'INTEGER_INVALID', message: 'is hexadecimal; write the number in decimal digits.' };
  if (/^[-+]?(\d+\.?\d*|\.\d+)e[-+]?\d+$/i.test(raw)) {
    return {
      code: 'INTEGER_INVALID',
      message:
        'is in scientific notation (as Excel shows long numbers); format the column as text or number with no decimals and write every digit.',
    };
  }
  if (/^-?\d+[.,]\d+$/.test(raw))
    return { code: 'INTEGER_INVALID', message: 'is not a whole number; it must be an integer.' };
  if (/^\d{1,3}([ .,\u00a0]\d{3})+$/.test(raw))
    return { code: 'INTEGER_INVALID', message: 'has digit-group separators; write just the digits.' };
  return { code: 'INTEGER_INVALID', message: 'is not a whole number written in digits.' };
}
