/**
 * Finds the first present field among candidate names in a parsed JSON body. The spec leaves
 * response field names "not shown", so callers pass lists from Config.responseFields.
 */

/**
 * Returns the first candidate whose value is a non-empty string or a finite number, as a
 * string. A dotted name (`error.code`) walks nested objects; objects and arrays never match,
 * so `{ "error": { "code": "X" } }` falls through `error` to `error.code`.
 */
export function findField(body: unknown, names: readonly string[]): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  for (const name of names) {
    let value: unknown = body;
    for (const part of name.split('.')) {
      value = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[part] : undefined;
    }
    if (typeof value === 'string' && value.trim() !== '') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return undefined;
}
