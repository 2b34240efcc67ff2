import { parsePhoneNumberFromString, getCountryCallingCode, type CountryCode } from 'libphonenumber-js/max';
import { isCountryCode } from '../reference/isoCodes.js';
import { isNeutralizedCell } from './csvCells.js';
import { emailProblem, languageCode, textProblem } from './textChecks.js';
import { maskValue } from './maskValue.js';
import { RECIPIENT_FIELDS, type OrderField } from './orderFields.js';
import type { RowErrorCode } from './rowErrorCodes.js';
import { rowNote } from './rowNotes.js';
import type { RowError } from './types.js';

/** Rules a person can tighten with a flag (see src/commands/readingOptions.ts). */
export interface RowRules {
  /** Refuse phone numbers that are possible for their country but not known to be in use (`--strict-phone`). */
  strictPhone?: boolean;
}

/** A row's fields as text (after column mapping). `undefined`: the field has no column/key. */
export type RowText = Partial<Record<OrderField, string>>;

export type RecipientField = (typeof RECIPIENT_FIELDS)[number];

/** One product line, parsed and normalised. */
export interface NormalizedRow {
  businessCustomerId: number;
  orderRef?: string;
  firstName: string;
  lastName: string;
  street: string;
  streetNumber: number;
  postalCode: string;
  city: string;
  countryCode: string;
  languageCode: string;
  email: string;
  telephoneNumber: string;
  productId: number;
  quantity: number;
}

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
  const errors: RowError[] = [];
  const notes: string[] = [];
  const fail = (field: OrderField, raw: string, code: RowErrorCode, message: string): void => {
    const shown = maskValue(field, raw);
    errors.push({ line, column: field, value: shown, code, message: `${field}${raw === '' ? '' : ` '${shown}'`} ${message}` });
  };
  const reads = new Map<OrderField, string>();
  // Memoised, so a field read twice (value, then recipient or identity) is noted once.
  const read = (field: OrderField): string => {
    const known = reads.get(field);
    if (known !== undefined) return known;
    const written = text[field] ?? '';
    let value = written.trim();
    if (value !== written) notes.push(rowNote(line, field, 'TRIMMED', 'spaces around the value removed'));
    if (isNeutralizedCell(value)) {
      value = value.slice(1);
      notes.push(`line ${line}: ${field}: removed the leading apostrophe that protects spreadsheet cells`);
    }
    reads.set(field, value);
    return value;
  };

  const integer = (field: OrderField): number | undefined => {
    let raw = read(field);
    if (/^0+[1-9]\d*$/.test(raw)) {
      // A spreadsheet's zero padding (00079): the number is plain, only its writing is not.
      const unpadded = raw.replace(/^0+/, '');
      notes.push(rowNote(line, field, 'LEADING_ZEROS', `'${raw}' read as ${unpadded}`));
      raw = unpadded;
    }
    const problem = integerProblem(raw);
    if (problem === undefined) return Number(raw);
    if (field === 'streetNumber' && problem.code === 'INTEGER_INVALID' && /^\d+\s*[-/]?\s*[\p{L}\d]/u.test(raw)) {
      fail(
        field,
        raw,
        'STREET_NUMBER_ADDITION',
        'has an addition: the API takes the street number as an integer, so a house number like 12a, 12-2 or 12 bis cannot be sent as written. Check with the recipient or the service operator how to address it.',
      );
    } else fail(field, raw, problem.code, problem.message);
    return undefined;
  };

  const textField = (field: OrderField): string => {
    let raw = read(field);
    if (/[\r\n]/.test(raw)) {
      // Address line 2 in a quoted cell ("Rue de la Paix\nBâtiment B"), as many shops export it.
      raw = raw
        .split(/\r\n|\r|\n/)
        .map((part) => part.trim().replace(/,$/, '').trim())
        .filter((part) => part !== '')
        .join(', ');
      notes.push(rowNote(line, field, 'LINE_BREAKS_JOINED', 'line breaks inside the text joined with ", "'));
    }
    const problem = textProblem(raw);
    if (problem !== undefined) fail(field, raw, problem.code, problem.message);
    return raw;
  };

  const orderRef = text.orderRef === undefined ? undefined : read('orderRef');
  if (orderRef === '') {
    fail('orderRef', '', 'ORDER_REF_MISSING', 'is empty. This file groups rows into orders by orderRef, so every row needs one (or leave the column out: then each row is one order).');
  } else if (orderRef !== undefined && /[\u0000-\u001f\u007f]/.test(orderRef)) {
    fail('orderRef', orderRef, 'CONTROL_CHARACTER', 'contains a control character.');
  }

  const businessCustomerId = integer('businessCustomerId');
  const bcidText = businessCustomerId === undefined ? read('businessCustomerId') : String(businessCustomerId);
  const firstName = textField('firstName');
  const lastName = textField('lastName');
  const street = textField('street');
  const streetNumber = integer('streetNumber');
  const postalCode = textField('postalCode');
  const city = textField('city');
  const countryCode = code('countryCode', read('countryCode'), 'upper', line, fail, notes);
  const languageCode = code('languageCode', read('languageCode'), 'lower', line, fail, notes);
  const email = read('email');
  const emailIssue = emailProblem(email);
  if (emailIssue !== undefined) fail('email', email, emailIssue.code, emailIssue.message);
  const telephoneNumber = phone(read('telephoneNumber'), countryCode, line, fail, notes, rules);
  const productId = integer('productId');
  const quantity = integer('quantity');

  const recipient: Record<RecipientField, string> = {
    firstName,
    lastName,
    street,
    streetNumber: streetNumber === undefined ? read('streetNumber') : String(streetNumber),
    postalCode,
    city,
    countryCode: countryCode ?? read('countryCode'),
    languageCode: languageCode ?? read('languageCode'),
    email,
    telephoneNumber: telephoneNumber ?? read('telephoneNumber'),
  };
  const identity = { ...(orderRef === undefined ? {} : { orderRef }), businessCustomerId: bcidText };
  if (errors.length > 0) return { line, errors, notes, recipient, identity };
  return {
    line,
    errors,
    notes,
    recipient,
    identity,
    value: {
      // every `undefined` below has produced an error above
      businessCustomerId: businessCustomerId!,
      ...(orderRef === undefined ? {} : { orderRef }),
      firstName,
      lastName,
      street,
      streetNumber: streetNumber!,
      postalCode,
      city,
      countryCode: countryCode!,
      languageCode: languageCode!,
      email,
      telephoneNumber: telephoneNumber!,
      productId: productId!,
      quantity: quantity!,
    },
  };
}

type Fail = (field: OrderField, raw: string, code: RowErrorCode, message: string) => void;

/**
 * Strict integers from text: plain digits, no sign, no leading zero, no exponent, no
 * fraction, no hex, at least 1 and at most 2^53-1 (larger ones do not survive JSON).
 */
export function integerProblem(raw: string): { code: RowErrorCode; message: string } | undefined {
  if (/^[1-9]\d*$/.test(raw)) {
    return Number.isSafeInteger(Number(raw)) ? undefined : { code: 'INTEGER_TOO_LARGE', message: `is larger than ${Number.MAX_SAFE_INTEGER}.` };
  }
  if (raw === '') return { code: 'FIELD_REQUIRED', message: 'is empty; it is required.' };
  if (/^-\d+$/.test(raw) || /^0+$/.test(raw)) return { code: 'INTEGER_NOT_POSITIVE', message: 'must be 1 or more.' };
  if (/^0\d+$/.test(raw)) return { code: 'INTEGER_INVALID', message: 'has a leading zero; write the number without it.' };
  if (/^\+\d+$/.test(raw)) return { code: 'INTEGER_INVALID', message: 'has a + sign; write just the digits.' };
  if (/^0x[\da-f]+$/i.test(raw)) return { code: 'INTEGER_INVALID', message: 'is hexadecimal; write the number in decimal digits.' };
  if (/^[-+]?(\d+\.?\d*|\.\d+)e[-+]?\d+$/i.test(raw)) {
    return { code: 'INTEGER_INVALID', message: 'is in scientific notation (as Excel shows long numbers); format the column as text or number with no decimals and write every digit.' };
  }
  if (/^-?\d+[.,]\d+$/.test(raw)) return { code: 'INTEGER_INVALID', message: 'is not a whole number; it must be an integer.' };
  if (/^\d{1,3}([ .,\u00a0]\d{3})+$/.test(raw)) return { code: 'INTEGER_INVALID', message: 'has digit-group separators; write just the digits.' };
  return { code: 'INTEGER_INVALID', message: 'is not a whole number written in digits.' };
}

function code(field: 'countryCode' | 'languageCode', raw: string, cased: 'upper' | 'lower', line: number, fail: Fail, notes: string[]): string | undefined {
  if (field === 'languageCode') {
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
  const hint = recased === 'UK' ? ' The United Kingdom is GB.' : recased.length === 3 ? ' Use the two-letter code (NL, not NLD).' : '';
  fail(field, raw, 'COUNTRY_CODE_INVALID', `is not an ISO 3166-1 two-letter country code such as NL, BE or DE.${hint}`);
  return undefined;
}

function phone(raw: string, countryCode: string | undefined, line: number, fail: Fail, notes: string[], rules: RowRules): string | undefined {
  if (raw === '') {
    fail('telephoneNumber', raw, 'FIELD_REQUIRED', 'is empty; it is required.');
    return undefined;
  }
  if (raw.startsWith('00')) {
    fail('telephoneNumber', raw, 'PHONE_NOT_INTERNATIONAL', 'starts with 00; write + instead (e.g. +31 6 ..., not 0031 6 ...).');
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
    fail('telephoneNumber', raw, 'PHONE_NOT_INTERNATIONAL', `must be international: + and the country code first.${example}`);
    return undefined;
  }
  // Digits and the usual punctuation only: the library would read letters as a phone keypad.
  const parsed = /^\+[\d\s().\/-]+$/.test(raw) ? parsePhoneNumberFromString(raw) : undefined;
  // Refuse only what cannot be right: a length or prefix impossible for the country the calling
  // code names. Numbers newer than the library's metadata are possible but not "valid".
  if (parsed === undefined || !parsed.isPossible()) {
    fail('telephoneNumber', raw, 'PHONE_INVALID', 'cannot be a phone number of the country its calling code names (check the country code and the number of digits).');
    return undefined;
  }
  if (!parsed.isValid()) {
    const where = parsed.country ?? `+${parsed.countryCallingCode}`;
    if (rules.strictPhone === true) {
      fail('telephoneNumber', raw, 'PHONE_UNVERIFIED', `is possible for ${where} but not a number range known to be in use; --strict-phone refuses it. Check it with the recipient, or import without --strict-phone.`);
      return undefined;
    }
    notes.push(rowNote(line, 'telephoneNumber', 'PHONE_UNVERIFIED', `possible for ${where} but not a number range known to be in use; sent as written, check it if the delivery fails`));
  }
  if (parsed.number !== raw) notes.push(`line ${line}: telephoneNumber written as E.164 (spaces and punctuation removed)`);
  return parsed.number;
}
