/**
 * Finds the first present field among candidate names in a parsed JSON body. The spec leaves
 * response field names "not shown", so callers pass lists from Config.responseFields.
 */
import { isRemoteId, type RemoteId } from './remoteId.js';

/**
 * Returns the first candidate whose value is a non-empty string or a finite number, as a
 * string. A dotted name (`error.code`) walks nested objects and a numeric part an array index
 * (`errors.0.code`); objects and arrays never match, so `{ "error": { "code": "X" } }` falls
 * through `error` to `error.code`.
 */
export function findField(body: unknown, names: readonly string[]): string | undefined {
  const value = findValue(body, names);
  return value === undefined ? undefined : String(value);
}

/**
 * Like {@link findField}, but the value keeps its JSON type (string or number): identifiers
 * go back to the API exactly as it sent them.
 */
export function findValue(body: unknown, names: readonly string[]): RemoteId | undefined {
  // A body is an object of fields; an array at the top is not (its items are walked by name only below).
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  for (const name of names) {
    let value: unknown = body;
    for (const part of partsOf(name)) value = child(value, part);
    if (isRemoteId(value)) return value;
  }
  return undefined;
}

/** Each name's dotted parts, split once: the names come from the settings, a handful per API. */
const PARTS = new Map<string, readonly string[]>();

function partsOf(name: string): readonly string[] {
  let parts = PARTS.get(name);
  if (parts === undefined) {
    if (PARTS.size >= 256) PARTS.clear(); // names are settings, not data; bounded all the same
    parts = name.split('.');
    PARTS.set(name, parts);
  }
  return parts;
}

function child(value: unknown, part: string): unknown {
  if (Array.isArray(value)) return /^\d+$/.test(part) ? value[Number(part)] : undefined;
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
}

/**
 * The absolute http(s) URLs anywhere in a parsed JSON body (nested objects and arrays
 * included), in document order, at most `limit`. For answers whose field names are unknown:
 * a login answer carries exactly one.
 */
export function findUrls(body: unknown, limit = 8): string[] {
  const found: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (found.length >= limit || depth > 8) return;
    if (typeof value === 'string') {
      if (ABSOLUTE_URL.test(value)) found.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
    } else if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) visit(item, depth + 1);
    }
  };
  visit(body, 0);
  return found;
}

/** An absolute http(s) URL with a host and no whitespace. */
export const ABSOLUTE_URL = /^https?:\/\/[^\s/?#]+\S*$/;
