import { readFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import type { ColumnSchema } from './columnSchema.js';
import { ORDER_COLUMNS } from './orderColumns.js';
import { resolveMapping } from './resolveColumns.js';

/**
 * Reads a `--map` file: a JSON object from header names in the order file to field names,
 * e.g. `{ "Voornaam": "firstName", "Huisnummer": "streetNumber", "Opmerking": "" }` ("" ignores a
 * column). Problems with it are usage errors (exit 2), checked before the order file is read;
 * field names are those of `schema` (orders unless told otherwise).
 */
export async function loadMapping(path: string, schema: ColumnSchema = ORDER_COLUMNS): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      'MAPPING_INVALID',
      `--map ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
      { cause: error },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UsageError('MAPPING_INVALID', `--map ${path}: not valid JSON (${(error as Error).message}).`, {
      cause: error,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError('MAPPING_INVALID', `--map ${path}: must be a JSON object like {"Voornaam": "firstName"}.`);
  }
  const mapping: Record<string, string> = {};
  for (const [header, field] of Object.entries(value)) {
    if (typeof field !== 'string')
      throw new UsageError('MAPPING_INVALID', `--map ${path}: the value for "${header}" must be a field name or "".`);
    mapping[header] = field;
  }
  resolveMapping(mapping, schema); // fails early on unknown field names
  return mapping;
}
