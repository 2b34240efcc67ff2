/**
 * Spreadsheet formula injection: a cell that starts with = + - @ tab or CR runs as a formula
 * when the CSV is opened in Excel or LibreOffice. Every CSV we write (rejects, results) passes
 * its cells through neutralizeCell; ingest undoes it (validateRow), so a written file can be
 * imported again.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEUTRALIZED = /^'[=+\-@\t\r]/;

/** Prefixes a formula-looking cell with an apostrophe (OWASP's advice for CSV exports). */
export function neutralizeCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** True when a cell was written by neutralizeCell and still has its apostrophe. */
export function isNeutralizedCell(value: string): boolean {
  return NEUTRALIZED.test(value);
}
