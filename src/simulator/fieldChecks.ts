/**
 * Field checks shared by the simulator's payload validators. Each check appends to a list of
 * problems rather than throwing, so one answer names every problem of a payload. Written
 * independently of src/ingest on purpose: the simulator cross-checks our client side.
 */
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import { isCountryCode, isLanguageCode } from '../reference/isoCodes.js';
import type { Problem } from './answer.js';

/** Longest accepted text field (names, street, city); the spec shows no limit. */
const MAX_TEXT_LENGTH = 100;
/** Longest accepted postal code. */
export const MAX_POSTAL_CODE_LENGTH = 16;

// C0 and C1 control characters and DEL; tabs and newlines do not belong in a name or a street.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const E164 = /^\+[1-9][0-9]{6,14}$/;
const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TOP_LEVEL = /^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;

/** True for a plain JSON object (not null, not an array). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks that `value` is an object with no fields outside `allowed`; missing fields are left
 * to the field checks. Returns the object, or undefined after recording why it is not one.
 */
export function checkObject(
  value: unknown,
  path: string,
  allowed: readonly string[],
  problems: Problem[],
): Record<string, unknown> | undefined {
  if (value === undefined) {
    problems.push({ path, problem: 'is required' });
    return undefined;
  }
  if (!isRecord(value)) {
    problems.push({ path, problem: 'must be an object' });
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) problems.push({ path: join(path, key), problem: 'is not a known field' });
  }
  return value;
}

/** A JSON integer > 0 (and a safe integer). */
export function checkPositiveInteger(value: unknown, path: string, problems: Problem[]): boolean {
  if (value === undefined) return fail(problems, path, 'is required');
  if (typeof value !== 'number' || !Number.isInteger(value)) return fail(problems, path, 'must be an integer');
  if (value <= 0) return fail(problems, path, 'must be greater than 0');
  if (!Number.isSafeInteger(value)) return fail(problems, path, 'is too large');
  return true;
}

/** A non-blank string without control characters, at most `maxLength` characters. */
export function checkText(value: unknown, path: string, problems: Problem[], maxLength = MAX_TEXT_LENGTH): boolean {
  if (value === undefined) return fail(problems, path, 'is required');
  if (typeof value !== 'string') return fail(problems, path, 'must be a string');
  if (value.trim() === '') return fail(problems, path, 'must not be blank');
  if (value.length > maxLength) return fail(problems, path, `must be at most ${maxLength} characters`);
  if (CONTROL.test(value)) return fail(problems, path, 'must not contain control characters');
  return true;
}

/** An ISO 639-1 code, two lowercase letters. */
export function checkLanguageCode(value: unknown, path: string, problems: Problem[]): void {
  if (!checkString(value, path, problems)) return;
  if (!/^[a-z]{2}$/.test(value)) fail(problems, path, 'must be a two-letter lowercase ISO 639-1 language code');
  else if (!isLanguageCode(value)) fail(problems, path, 'is not an ISO 639-1 language code');
}

/** An assigned ISO 3166-1 alpha-2 code, two uppercase letters. */
export function checkCountryCode(value: unknown, path: string, problems: Problem[]): void {
  if (!checkString(value, path, problems)) return;
  if (!/^[A-Z]{2}$/.test(value)) fail(problems, path, 'must be a two-letter uppercase ISO 3166-1 country code');
  else if (!isCountryCode(value)) fail(problems, path, 'is not an assigned ISO 3166-1 alpha-2 country code');
}

/** A plausible ASCII e-mail address: local@domain.tld, at most 254 characters. */
export function checkEmail(value: unknown, path: string, problems: Problem[]): void {
  if (!checkString(value, path, problems)) return;
  if (!isPlausibleEmail(value)) fail(problems, path, 'must be an e-mail address like name@example.com');
}

/** E.164 (a plus and 7-15 digits, no spaces) and valid for its country per libphonenumber's full metadata. */
export function checkPhone(value: unknown, path: string, problems: Problem[]): void {
  if (!checkString(value, path, problems)) return;
  if (!E164.test(value))
    fail(problems, path, 'must be in E.164 format: a leading + and digits only, e.g. +31612345678');
  else if (!isValidPhoneNumber(value)) fail(problems, path, 'is not a valid phone number for its country');
}

/** A UUID in 8-4-4-4-12 hex form (versions 1-8, RFC 4122 variant). */
export function checkUuid(value: unknown, path: string, problems: Problem[]): boolean {
  if (!checkString(value, path, problems)) return false;
  if (!UUID.test(value)) return fail(problems, path, 'must be a UUID like 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01');
  return true;
}

function isPlausibleEmail(value: string): boolean {
  if (value.length > 254) return false;
  const at = value.lastIndexOf('@');
  if (at <= 0 || at > 64) return false;
  const local = value.slice(0, at);
  const labels = value.slice(at + 1).split('.');
  if (!EMAIL_LOCAL.test(local) || labels.length < 2) return false;
  if (!labels.every((label) => DOMAIN_LABEL.test(label))) return false;
  return TOP_LEVEL.test(labels[labels.length - 1] as string);
}

function checkString(value: unknown, path: string, problems: Problem[]): value is string {
  if (value === undefined) return fail(problems, path, 'is required');
  if (typeof value !== 'string') return fail(problems, path, 'must be a string');
  return true;
}

function fail(problems: Problem[], path: string, problem: string): false {
  problems.push({ path, problem });
  return false;
}

/** Joins a JSON path: `recipient` + `email` -> `recipient.email`. */
function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
