/**
 * The API's `details` of an error body (`{ code, message, details: [...] }`, spec section 6) as
 * one line a person can act on, e.g. `products[0].productId: product 5999 is not in the
 * catalogue`. Entries may be text or objects with a path (`path`, `field`) and a sentence
 * (`message`, `problem`, `reason`); anything else is shown as JSON. Empty when there are none.
 */
export function errorDetails(body: unknown): string {
  if (typeof body !== 'object' || body === null || !('details' in body)) return '';
  const details = body.details;
  if (!Array.isArray(details)) return typeof details === 'string' ? details : '';
  return details
    .map((entry: unknown) => {
      if (typeof entry === 'string') return entry;
      if (typeof entry !== 'object' || entry === null) return JSON.stringify(entry);
      const e = entry as Record<string, unknown>;
      const path = [e.path, e.field, e.pointer].find((v) => typeof v === 'string');
      const text = [e.message, e.problem, e.reason, e.issue].find((v) => typeof v === 'string');
      if (text === undefined) return JSON.stringify(entry);
      return path === undefined ? String(text) : `${String(path)}: ${String(text)}`;
    })
    .join('; ');
}

/** A parked order's reason with the API's details appended, when the body has any. */
export function reasonWithDetails(reason: string, body: unknown): string {
  const details = errorDetails(body);
  return details === '' || reason.includes(details) ? reason : `${reason} (details: ${details})`;
}
