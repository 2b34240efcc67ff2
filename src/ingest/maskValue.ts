import { PERSONAL_FIELDS } from './orderFields.js';

const MAX_SHOWN = 40;

/**
 * The form of a value that may appear in messages, summaries and logs. Personal data
 * (names, street, postal code, e-mail, phone) keeps just enough to find the cell:
 * `j***@e***.com`, `+31******78`, `J***`. Other values are shown as written, shortened.
 * The rejects file is the one place original text is written, because it goes back to the
 * person who owns the data.
 */
export function maskValue(field: string | undefined, value: string): string {
  if (field === undefined || !PERSONAL_FIELDS.has(field)) return shorten(value);
  if (value === '') return '';
  if (field === 'email') return maskEmail(value);
  if (field === 'telephoneNumber') return maskPhone(value);
  if (field === 'postalCode') return value.slice(0, 2) + '***';
  return [...value][0] + '***';
}

function maskEmail(value: string): string {
  const at = value.lastIndexOf('@');
  if (at <= 0) return [...value][0] + '***';
  const domain = value.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const tld = dot > 0 ? domain.slice(dot) : '';
  const domainHead = domain === '' ? '' : [...domain][0] + '***';
  return `${[...value][0]}***@${domainHead}${shorten(tld)}`;
}

function maskPhone(value: string): string {
  const chars = [...value];
  if (chars.length <= 6) return '*'.repeat(chars.length);
  const head = value.startsWith('+') ? 3 : 1;
  return chars.slice(0, head).join('') + '*'.repeat(Math.min(chars.length - head - 2, 12)) + chars.slice(-2).join('');
}

function shorten(value: string): string {
  const chars = [...value];
  return chars.length <= MAX_SHOWN ? value : chars.slice(0, MAX_SHOWN - 1).join('') + '…';
}
