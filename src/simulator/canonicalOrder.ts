/**
 * The canonical text of a validated order, for duplicate counting. validateOrder admits no
 * field outside the spec's shape, so listing the fields in a fixed order is canonical: two
 * orders that differ only in key order give the same text. One native JSON.stringify of an
 * array is several times cheaper than sorting keys at every level.
 */
import type { ValidOrder } from './validateOrder.js';

/** Fixed-order serialization of every field of `order`. */
export function canonicalOrder(order: ValidOrder): string {
  const { recipient } = order;
  const { address } = recipient;
  return JSON.stringify([
    order.businessCustomerId,
    address.firstName,
    address.lastName,
    address.street,
    address.streetNumber,
    address.postalCode,
    address.city,
    address.countryCode,
    recipient.languageCode,
    recipient.email,
    recipient.telephoneNumber,
    order.products.map((line) => [line.productId, line.quantity]),
  ]);
}
