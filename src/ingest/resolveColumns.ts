import { FileRefusedError, UsageError } from '../errors.js';
import type { ColumnSchema } from './columnSchema.js';
import { ORDER_COLUMNS } from './orderColumns.js';
import { ERROR_COLUMNS, REJECT_COLUMNS } from './orderFields.js';

/** How a file's columns map onto the fields of a record kind (orders unless told otherwise). */
export interface ColumnPlan {
  /** Original header names, in file order. */
  columns: string[];
  /** Field -> index into `columns`. Every required field is present. */
  fieldIndex: Partial<Record<string, number>>;
  /** Headers that map to no field (extra columns are allowed and left out of the order). */
  ignored: string[];
  /** Things a person should know although the file is accepted. */
  warnings: string[];
  /**
   * The file is one of our rejects files (it has the reject_* columns). There an empty orderRef
   * means the row never had one (e.g. a JSON row without orderRef), so the row is an order of its
   * own instead of an error.
   */
  rejectsFile?: boolean;
}

/**
 * A mapping file's content after checking: normalised header -> field, or null to ignore
 * the column on purpose.
 */
export type ResolvedMapping = ReadonlyMap<string, string | null>;

/**
 * Header matching ignores case, spaces, `_` and `-`, and array brackets in the API's dotted
 * paths, so `Street Number`, `street_number` and `recipient.address.streetNumber` all match.
 */
export function normalizeHeader(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/\[\d*\]/g, '')
    .replace(/[\s_-]+/g, '');
}

const aliasCache = new WeakMap<ColumnSchema, ReadonlyMap<string, string>>();

/** Normalised name -> field, for every field name and alias of a schema (built once per schema). */
function aliasesOf(schema: ColumnSchema): ReadonlyMap<string, string> {
  let aliases = aliasCache.get(schema);
  if (aliases === undefined) {
    aliases = new Map(
      schema.fields.flatMap((field) =>
        [field, ...(schema.aliases[field] ?? [])].map((name) => [normalizeHeader(name), field] as const),
      ),
    );
    aliasCache.set(schema, aliases);
  }
  return aliases;
}

const RESERVED: ReadonlySet<string> = new Set(ERROR_COLUMNS.map(normalizeHeader));

/** The field a header (or a mapping target) names, if any. */
export function fieldForName(name: string, schema: ColumnSchema = ORDER_COLUMNS): string | undefined {
  return aliasesOf(schema).get(normalizeHeader(name));
}

/**
 * Checks a `--map` object ({ "header in the file": "field", ... }, "" to ignore a column).
 * Throws UsageError (exit 2) for targets that are not fields: a typo there is a usage mistake,
 * not a problem with the order file.
 */
export function resolveMapping(
  mapping: Readonly<Record<string, unknown>> | undefined,
  schema: ColumnSchema = ORDER_COLUMNS,
): ResolvedMapping {
  const resolved = new Map<string, string | null>();
  for (const [header, target] of Object.entries(mapping ?? {})) {
    if (target === '' || target === null) {
      resolved.set(normalizeHeader(header), null);
      continue;
    }
    const field = typeof target === 'string' ? fieldForName(target, schema) : undefined;
    if (field === undefined) {
      throw new UsageError(
        'MAPPING_INVALID',
        `mapping: "${header}" -> ${JSON.stringify(target)} is not a known field. Fields: ${schema.fields.join(', ')} (or "" to ignore the column).`,
      );
    }
    resolved.set(normalizeHeader(header), field);
  }
  return resolved;
}

/**
 * Matches a header row against the order fields. Refuses the file (FileRefusedError, exit 3)
 * when a required column is missing or two columns mean the same field, naming the closest
 * headers the file does have so the fix is obvious.
 */
export function resolveColumns(
  file: string,
  headers: readonly string[],
  mapping: ResolvedMapping = new Map(),
  schema: ColumnSchema = ORDER_COLUMNS,
): ColumnPlan {
  const aliases = aliasesOf(schema);
  const fieldIndex: Partial<Record<string, number>> = {};
  const ignored: string[] = [];
  const unmatched: string[] = [];
  headers.forEach((header, index) => {
    const key = normalizeHeader(header);
    const mapped = mapping.get(key);
    const field = mapped === undefined ? aliases.get(key) : mapped;
    if (field === null || key === '' || RESERVED.has(key)) {
      if (key !== '' && !RESERVED.has(key)) ignored.push(header);
      return;
    }
    if (field === undefined) {
      ignored.push(header);
      unmatched.push(header);
      return;
    }
    const previous = fieldIndex[field];
    if (previous !== undefined) {
      throw new FileRefusedError(
        'COLUMN_DUPLICATE',
        file,
        `columns "${headers[previous]}" and "${header}" both mean ${field}. Remove one, or ignore one with --map (e.g. {"${header}": ""}).`,
        { details: { field, columns: [headers[previous], header] } },
      );
    }
    fieldIndex[field] = index;
  });

  const missing = schema.required.filter((field) => fieldIndex[field] === undefined);
  if (missing.length > 0) {
    const suggestions = suggestHeaders(missing, unmatched, schema);
    const hints = missing.map((field) => {
      const closest = suggestions.get(field);
      return closest === undefined ? field : `${field} (closest header: "${closest}")`;
    });
    const [exampleField, exampleHeader] = [...suggestions.entries()][0] ?? [missing[0], unmatched[0]];
    throw new FileRefusedError(
      'COLUMNS_MISSING',
      file,
      `missing required column${missing.length > 1 ? 's' : ''}: ${hints.join(', ')}. ` +
        `The file has: ${headers.map((h) => `"${h}"`).join(', ')}. Rename the columns, or map them with --map mapping.json` +
        (exampleHeader !== undefined ? ` (e.g. {"${exampleHeader}": "${exampleField}"}).` : '.'),
      { details: { missing, headers: [...headers], suggestions: Object.fromEntries(suggestions) } },
    );
  }
  const warnings =
    schema.warnings?.(fieldIndex, (field) => suggestHeaders([field], unmatched, schema).get(field)) ?? [];
  const rejectsFile = REJECT_COLUMNS.every((column) =>
    headers.some((header) => normalizeHeader(header) === normalizeHeader(column)),
  );
  return { columns: [...headers], fieldIndex, ignored, warnings, ...(rejectsFile ? { rejectsFile } : {}) };
}

/** True for a column of our own error columns (reject_*): never a field, never "ignored". */
export function isErrorColumn(name: string): boolean {
  return RESERVED.has(normalizeHeader(name));
}

/**
 * For each missing field, an unmatched header that plausibly means it (edit distance at most
 * half the length, or one name containing the other); each header is suggested once, best
 * pairs first. Far-fetched pairs are left out: a wrong hint costs more than none.
 */
export function suggestHeaders(
  missing: readonly string[],
  headers: readonly string[],
  schema: ColumnSchema,
): Map<string, string> {
  const pairs: { field: string; header: string; score: number }[] = [];
  for (const field of missing) {
    const target = normalizeHeader(field);
    for (const header of headers) {
      const candidate = normalizeHeader(header);
      if (candidate.length < 2) continue;
      const score = (schema.synonyms[field] ?? []).includes(candidate) ? 0 : likeness(target, candidate);
      if (score <= 0.42) pairs.push({ field, header, score });
    }
  }
  pairs.sort((a, b) => a.score - b.score);
  const chosen = new Map<string, string>();
  const used = new Set<string>();
  for (const { field, header } of pairs) {
    if (chosen.has(field) || used.has(header)) continue;
    chosen.set(field, header);
    used.add(header);
  }
  return new Map(
    missing.flatMap((field) => {
      const header = chosen.get(field);
      return header === undefined ? [] : [[field, header] as const];
    }),
  );
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** 0.3 when one name contains the other, else their edit distance relative to the longer one. */
function likeness(target: string, candidate: string): number {
  if (target.includes(candidate) || candidate.includes(target)) return 0.3;
  return editDistance(target, candidate) / Math.max(target.length, candidate.length);
}
