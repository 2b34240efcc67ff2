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

/**
 * Cells of a CSV record with the wrong number of fields, fitted to the header for the rejects
 * file. Surplus cells go into the last column so the person still sees everything they wrote.
 */
export function fitCells(values: readonly string[], width: number): string[] {
  const cells = values.slice(0, width);
  while (cells.length < width) cells.push('');
  if (values.length > width && width > 0) cells[width - 1] = values.slice(width - 1).join(' | ');
  return cells;
}

/** The most a spreadsheet cell holds (Excel: 32,767 characters), less room for the mark that says it was cut. */
const CELL_MAX = 32_000;

/**
 * A record kept whole in one cell of the rejects file (a JSON element or NDJSON line that is not
 * valid JSON), so the person sees what they wrote; cut at what a spreadsheet cell holds, and said so.
 */
export function wholeRecordCell(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= CELL_MAX ? trimmed : `${trimmed.slice(0, CELL_MAX)} [cut: ${trimmed.length} characters]`;
}
