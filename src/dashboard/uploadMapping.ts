import type { ColumnSchema } from '../ingest/columnSchema.js';
import { fieldForName, isErrorColumn, normalizeHeader, suggestHeaders } from '../ingest/resolveColumns.js';

/**
 * How an upload's columns meet the kind's fields, for the mapping step: every field without a
 * column (the required ones, and the optional ones such as orderRef, which decides how rows group
 * into orders), the file's columns no field uses (left out of the orders), and a likely column for
 * each field (the near misses `bulkorder validate` names too).
 */
export interface MappingNeed {
  /** Required fields without a column: the file cannot be imported until each has one. */
  missing: string[];
  /** Optional fields without a column (orders: orderRef). */
  optional: string[];
  /** Every column of the file, in order. */
  headers: string[];
  /** Field -> the column that holds it now. */
  mapped: Record<string, string>;
  /** Columns no field uses: they are left out of the orders. */
  ignored: string[];
  /** Field -> the column that plausibly means it. */
  suggestions: Record<string, string>;
}

/**
 * Reads the headers as the import will (a chosen mapping first, then names and aliases), so the
 * page shows what the file means now and offers every field still without a column.
 */
export function mappingNeed(
  headers: readonly string[],
  mapping: Readonly<Record<string, string>> | undefined,
  schema: ColumnSchema,
): MappingNeed {
  const chosen = new Map(Object.entries(mapping ?? {}).map(([header, field]) => [normalizeHeader(header), field]));
  const mapped: Record<string, string> = {};
  const ignored: string[] = [];
  for (const header of headers) {
    if (normalizeHeader(header) === '' || isErrorColumn(header)) continue;
    const choice = chosen.get(normalizeHeader(header));
    // No choice: guess from the header's name; an empty choice: the person left the column out.
    const chosenField = choice === '' ? undefined : choice;
    const field = choice === undefined ? fieldForName(header, schema) : chosenField;
    if (field === undefined || mapped[field] !== undefined) ignored.push(header);
    else mapped[field] = header;
  }
  const unmapped = schema.fields.filter((field) => mapped[field] === undefined);
  const missing = unmapped.filter((field) => schema.required.includes(field));
  const optional = unmapped.filter((field) => !schema.required.includes(field));
  const suggestions = Object.fromEntries(suggestHeaders([...missing, ...optional], ignored, schema));
  return { missing, optional, headers: [...headers], mapped, ignored, suggestions };
}

/**
 * A refusal or warning as the dashboard says it: sentences that give CLI advice (`--map`,
 * `--delimiter`, `--allow-empty`...) are left out; the page says what to do here instead.
 */
export function withoutCliAdvice(message: string): string {
  return message
    .split(/(?<=[.;:])\s+(?=[A-Z(])/)
    .filter((sentence) => !/(^|\s|`)--[a-z]/.test(sentence))
    .join(' ')
    .trim();
}

/** What to do in the dashboard about a file refused as a whole, by its code. */
export function dashboardAdvice(code: string): string {
  switch (code) {
    case 'DELIMITER_UNKNOWN':
      return 'Save the file with , or ; between the columns (Excel: "CSV UTF-8") and upload it again.';
    case 'ENCODING_INVALID':
    case 'ENCODING_MISMATCH':
    case 'ENCODING_UNSUPPORTED':
      return 'Save the file as "CSV UTF-8" (Excel: Save as, CSV UTF-8) and upload it again.';
    case 'FILE_NOT_TEXT':
      return 'Open it in its program and save or export it as "CSV UTF-8", then upload that file.';
    case 'FILE_EMPTY':
      return 'The file holds no rows: check the export it came from, then upload it again.';
    case 'TOO_MANY_REJECTED':
      return 'Most rows are wrong: check that this is the right file and that its columns mean what their names say, fix it and upload it again.';
    case 'COLUMN_DUPLICATE':
      return 'Two columns mean the same field: delete one of them from the file (or rename it) and upload it again.';
    case 'FILE_TOO_LARGE':
      return 'Split the file, or import it with `bulkorder import` on the server.';
    default:
      return 'Fix the file and upload it again.';
  }
}
