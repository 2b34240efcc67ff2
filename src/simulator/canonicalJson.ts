/**
 * A canonical JSON text: object keys sorted at every level, arrays in their order. Two orders
 * that differ only in key order are the same order, which is what duplicate counting needs.
 */

/** Serializes `value` with sorted object keys. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (i > 0) out += ',';
    out += JSON.stringify(key) + ':' + canonicalJson(record[key]);
  }
  return out + '}';
}
