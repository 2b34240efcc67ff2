import { normalizeHeader } from './resolveColumns.js';

const REJECT_KEY = normalizeHeader('reject_key');

/**
 * The dead letter a fixed row replaces: the `reject_key` cell of an exported dead letter imported again
 * (src/deadLetter/exportDeadLetters.ts writes it), when it names another key than the record's own.
 * A record's rows share it; the first row that has one speaks.
 */
export function replacedKey(record: { key: string; rows: readonly Record<string, string>[] }): string | undefined {
  for (const row of record.rows)
    for (const [header, value] of Object.entries(row)) {
      const key = value.trim();
      if (key !== '' && normalizeHeader(header) === REJECT_KEY) return key === record.key ? undefined : key;
    }
  return undefined;
}
