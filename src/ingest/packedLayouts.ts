/**
 * Every layout a packed payload (orderShape.ts `packPayload`, chunk jobs) was ever written in,
 * by version: the API paths of the order's values, then of each product line's, in the order
 * they are packed. A chunk job names its layout (`pk`; a job without one is layout 1, the shape
 * before layouts had versions), so a job queued before a field row was added unpacks by its own
 * paths, never by today's positions. Append only: a row once released is never changed.
 */
export interface PackedLayout {
  /** Paths in the order (the payload's fields outside `products`). */
  readonly head: readonly string[];
  /** Paths inside one product line. */
  readonly line: readonly string[];
}

export const PACKED_LAYOUTS: Readonly<Record<number, PackedLayout>> = {
  1: {
    head: [
      'businessCustomerId',
      'recipient.address.firstName',
      'recipient.address.lastName',
      'recipient.address.street',
      'recipient.address.streetNumber',
      'recipient.address.postalCode',
      'recipient.address.city',
      'recipient.address.countryCode',
      'recipient.languageCode',
      'recipient.email',
      'recipient.telephoneNumber',
    ],
    line: ['productId', 'quantity'],
  },
};

/** The newest layout this code knows. */
export const NEWEST_PACKED_LAYOUT = Math.max(...Object.keys(PACKED_LAYOUTS).map(Number));

/** The version of a layout, or undefined when it is none of PACKED_LAYOUTS (the field table changed without a new row here). */
export function packedLayoutVersion(layout: PackedLayout): number | undefined {
  const same = (a: readonly string[], b: readonly string[]): boolean =>
    a.length === b.length && a.every((path, i) => path === b[i]);
  const found = Object.entries(PACKED_LAYOUTS).find(
    ([, known]) => same(known.head, layout.head) && same(known.line, layout.line),
  );
  return found === undefined ? undefined : Number(found[0]);
}
