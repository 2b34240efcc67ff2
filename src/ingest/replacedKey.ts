import { normalizeHeader } from './resolveColumns.js';

const REJECT_KEY = normalizeHeader('reject_key');
/** Whether a header names the reject key, per header name (a file has a few dozen, the same in every row). */
const IS_REJECT_KEY = new Map<string, boolean>();
const IS_REJECT_KEY_MAX = 1000;

function isRejectKey(header: string): boolean {
  let is = IS_REJECT_KEY.get(header);
  if (is === undefined) {
    is = normalizeHeader(header) === REJECT_KEY;
    if (IS_REJECT_KEY.size < IS_REJECT_KEY_MAX) IS_REJECT_KEY.set(header, is);
  }
  return is;
}

/**
 * The dead letter a fixed row replaces: the `reject_key` cell of an exported dead letter imported again
 * (src/deadLetter/exportDeadLetters.ts writes it), when it names another key than the record's own.
 * A record's rows share it; the first row that has one speaks.
 */
export function replacedKey(record: { key: string; rows: readonly Record<string, string>[] }): string | undefined {
  for (const row of record.rows)
    for (const header of Object.keys(row)) {
      // The header first: a row's cells are mostly other columns, and their values need no trim.
      if (!isRejectKey(header)) continue;
      const key = (row[header] ?? '').trim();
      if (key !== '') return key === record.key ? undefined : key;
    }
  return undefined;
}
