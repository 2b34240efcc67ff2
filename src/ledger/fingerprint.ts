import { hash } from 'node:crypto';

/** Hex digits of each part's digest (entries written before kept 8: compared on the first 6). */
const PART_HEX = 6;

/** What the ledger keeps of a record's content: enough to tell "the same" from "other", no personal data. */
export interface Fingerprint {
  /** sha256 (32 hex) of the canonical JSON of the whole payload. */
  hash: string;
  /**
   * `<top-level field>=<6 hex>` per field, `;`-separated: names what differs without keeping it.
   * 6 hex, not more, keeps an order's parts under 64 bytes, so Redis stores the whole ledger entry
   * as a compact listpack (hash-max-listpack-value); whether the content differs is `hash`'s call.
   */
  parts: string;
}

/**
 * The fingerprint of any record payload (an order, an employee account). Canonical JSON: object
 * keys sorted, array elements sorted by their own canonical form (the products of an order are
 * a set: written in another order they are the same order), so the same record read from a CSV,
 * a JSON file or a re-export gets the same fingerprint.
 */
export function fingerprintOf(payload: unknown): Fingerprint {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    return { hash: sha256(canonicalJson(payload)).slice(0, 32), parts: '' };
  // An import reserves with it, and its results file compares with it again: the same payload, made once.
  let fingerprint = MADE.get(payload);
  if (fingerprint === undefined) {
    fingerprint = recordFingerprint(payload as Record<string, unknown>);
    MADE.set(payload, fingerprint);
  }
  return fingerprint;
}

/** Fingerprints made, by payload: a payload is never changed once read, and an entry goes with its payload. */
const MADE = new WeakMap<object, Fingerprint>();

function recordFingerprint(record: Record<string, unknown>): Fingerprint {
  // Each top-level field's canonical JSON is made once: hashed as its part, and joined into the whole.
  const parts: string[] = [];
  const fields: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const json = canonicalJson(record[key]);
    parts.push(`${key}=${sha256(json).slice(0, PART_HEX)}`);
    if (record[key] !== undefined) fields.push(`${quotedKey(key)}:${json}`);
  }
  return { hash: sha256(`{${fields.join(',')}}`).slice(0, 32), parts: parts.join(';') };
}

/** The top-level fields whose fingerprints differ (e.g. `['recipient', 'products']`). */
export function differingParts(earlier: string, now: string): string[] {
  const parse = (text: string) =>
    new Map(
      text
        .split(';')
        .filter(Boolean)
        .map((pair) => pair.split('=') as [string, string]),
    );
  const a = parse(earlier);
  const b = parse(now);
  return [...new Set([...a.keys(), ...b.keys()])]
    .filter((key) => a.get(key)?.slice(0, PART_HEX) !== b.get(key)?.slice(0, PART_HEX))
    .sort();
}

/**
 * JSON with object keys sorted and array elements sorted by their canonical text. Built by
 * appending to one string (no per-key arrays or closures): it runs for every order an import reserves.
 */
function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).sort().join(',')}]`;
  const record = value as Record<string, unknown>;
  let json = '';
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    json += `${json === '' ? '{' : ','}${quotedKey(key)}:${canonicalJson(member)}`;
  }
  return json === '' ? '{}' : `${json}}`;
}

/** A key's JSON text, made once per key name (a payload has a few dozen names, the same in every order). */
const QUOTED_KEYS = new Map<string, string>();
const QUOTED_KEYS_MAX = 1000;

function quotedKey(key: string): string {
  let quoted = QUOTED_KEYS.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (QUOTED_KEYS.size < QUOTED_KEYS_MAX) QUOTED_KEYS.set(key, quoted);
  }
  return quoted;
}

function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}
