/**
 * Removes known secret values from a response body before it is logged, returned or kept
 * in a dead letter: a careless server may echo the token or the client secret back.
 */

/** Returns `value` with every occurrence of each secret (raw, URL- or form-encoded) replaced by `[redacted]`. */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const needles = needlesOf(secrets);
  if (needles.length === 0) return value;
  // Nearly every answer holds no secret: it is found so, and given back as it is, without a copy.
  if (!holdsAny(value, needles, 0)) return value;
  return walk(value, needles, 0) as T;
}

/** The forms of the last secrets asked for: every response asks with the same token and secret, until the token changes. */
let last: { key: string; needles: readonly string[] } | undefined;

function needlesOf(secrets: readonly string[]): readonly string[] {
  const key = secrets.join('\u0000');
  if (last?.key === key) return last.needles;
  const needles = [
    ...new Set(
      secrets
        .filter((s) => s.length >= 4)
        .flatMap((s) => [s, encodeURIComponent(s), new URLSearchParams({ s }).toString().slice(2)]),
    ),
  ];
  last = { key, needles };
  return needles;
}

/** True when `walk` would change something: a string (key or value) it reaches holds a needle. */
function holdsAny(value: unknown, needles: readonly string[], depth: number): boolean {
  if (typeof value === 'string') return needles.some((needle) => value.includes(needle));
  if (depth > 20 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((item) => holdsAny(item, needles, depth + 1));
  for (const [key, item] of Object.entries(value))
    if (holdsAny(key, needles, depth + 1) || holdsAny(item, needles, depth + 1)) return true;
  return false;
}

function walk(value: unknown, needles: readonly string[], depth: number): unknown {
  if (typeof value === 'string') return needles.reduce((text, needle) => text.split(needle).join('[redacted]'), value);
  if (depth > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => walk(item, needles, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      walk(key, needles, depth + 1) as string,
      walk(item, needles, depth + 1),
    ]),
  );
}
