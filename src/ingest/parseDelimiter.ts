import { UsageError } from '../errors.js';

/**
 * A `--delimiter` flag as written (`tab`, `\t` or one character) -> the delimiter. Throws
 * UsageError DELIMITER_INVALID (exit 2) for anything else, so every command refuses the same
 * values with the same words.
 */
export function parseDelimiter(flag: string): string {
  const delimiter = flag === 'tab' || flag === '\\t' ? '\t' : flag;
  checkDelimiter(delimiter, flag);
  return delimiter;
}

/**
 * Refuses a CSV delimiter that csv-parse/csv-stringify cannot use: anything but one character,
 * a quote, or a line break. `written` is the value as the user gave it, for the message.
 */
export function checkDelimiter(delimiter: string, written: string = delimiter): void {
  if (delimiter.length !== 1 || /["\r\n]/.test(delimiter)) {
    throw new UsageError(
      'DELIMITER_INVALID',
      `--delimiter must be "tab" or one character other than a quote or line break (got ${JSON.stringify(written)}).`,
    );
  }
}
