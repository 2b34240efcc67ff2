import { isNeutralizedCell } from './csvCells.js';
import { maskValue } from './maskValue.js';
import type { RowErrorCode } from '../errorCodes.js';
import { emailProblem, languageCode, textProblem } from './textChecks.js';
import type { RowError } from './types.js';
import type { AccountField, AccountPayload } from './accountColumns.js';

/** A row's account fields as text (after column mapping); `undefined`: no such column or key. */
export type AccountText = Partial<Record<AccountField, string>>;

/** The result of checking one employee row: every problem, not only the first. */
export interface CheckedAccount {
  line: number;
  /** Present only when `errors` is empty. */
  value?: AccountPayload;
  errors: RowError[];
  notes: string[];
  /** companyId (lower case) and email when both are valid: the account's identity, even if other fields are not. */
  identity?: { companyId: string; email: string };
}

// RFC 9562 layout with a version (1-8) and variant (8-b) digit, as the service checks it.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Checks one employee row against the Cafetariaplan API's account shape. Text is trimmed;
 * the only other normalisations are the case of the language code and the companyId, and the
 * apostrophe the rejects file puts before formula-like cells, each reported in `notes`.
 */
export function validateAccountRow(line: number, text: AccountText): CheckedAccount {
  const errors: RowError[] = [];
  const notes: string[] = [];
  const fail = (field: AccountField, raw: string, code: RowErrorCode, message: string): void => {
    const shown = maskValue(field, raw);
    errors.push({
      line,
      column: field,
      value: shown,
      code,
      message: `${field}${raw === '' ? '' : ` '${shown}'`} ${message}`,
    });
  };
  const read = (field: AccountField): string => {
    let value = (text[field] ?? '').trim();
    if (isNeutralizedCell(value)) {
      value = value.slice(1);
      notes.push(`line ${line}: ${field}: removed the leading apostrophe that protects spreadsheet cells`);
    }
    return value;
  };
  const name = (field: 'firstName' | 'lastName'): string | undefined => {
    const raw = read(field);
    const problem = textProblem(raw);
    if (problem !== undefined) fail(field, raw, problem.code, problem.message);
    return problem === undefined ? raw : undefined;
  };

  const rawEmail = read('email');
  const emailIssue = emailProblem(rawEmail);
  if (emailIssue !== undefined) fail('email', rawEmail, emailIssue.code, emailIssue.message);
  const firstName = name('firstName');
  const lastName = name('lastName');

  const rawLanguage = read('isoLanguageCode');
  const language = languageCode(rawLanguage);
  if ('problem' in language) fail('isoLanguageCode', rawLanguage, language.problem.code, language.problem.message);
  else if (language.value !== rawLanguage)
    notes.push(`line ${line}: isoLanguageCode '${rawLanguage}' -> '${language.value}'`);

  const companyId = company(read('companyId'), line, fail, notes);

  const identity = companyId !== undefined && emailIssue === undefined ? { companyId, email: rawEmail } : undefined;
  if (
    errors.length > 0 ||
    firstName === undefined ||
    lastName === undefined ||
    !('value' in language) ||
    companyId === undefined ||
    identity === undefined
  ) {
    return { line, errors, notes, ...(identity === undefined ? {} : { identity }) };
  }
  return {
    line,
    errors,
    notes,
    identity,
    value: { email: rawEmail, firstName, lastName, isoLanguageCode: language.value, companyId },
  };
}

/** A companyId in its sent form (lower case), or undefined when it is not a UUID. */
export function normalizeCompanyId(raw: string): string | undefined {
  const lower = raw.trim().toLowerCase();
  return UUID.test(lower) ? lower : undefined;
}

function company(
  raw: string,
  line: number,
  fail: (field: AccountField, raw: string, code: RowErrorCode, message: string) => void,
  notes: string[],
): string | undefined {
  if (raw === '') {
    fail('companyId', raw, 'FIELD_REQUIRED', 'is empty; it is required.');
    return undefined;
  }
  const lower = raw.toLowerCase();
  if (UUID.test(lower)) {
    if (lower !== raw) notes.push(`line ${line}: companyId written in lower case`);
    return lower;
  }
  const bare = lower.replace(/^\{(.*)\}$/, '$1');
  let hint = ' Ask the service operator for your company id.';
  if (bare !== lower && UUID.test(bare)) hint = ' Leave out the braces.';
  else if (/^[0-9a-f]{32}$/.test(lower)) hint = ' Write it with dashes (8-4-4-4-12).';
  fail('companyId', raw, 'COMPANY_ID_INVALID', `is not a UUID like 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01.${hint}`);
  return undefined;
}
