import { createHash } from 'node:crypto';
import { ORDER_FIELDS } from './orderFields.js';
import { PRODUCT_FIELDS, payloadLines } from './orderShape.js';
import type { OrderPayload } from './types.js';

/**
 * Order keys identify an order across imports: the ledger uses them to never send an order
 * twice, and BullMQ uses them as job ids. They use only [A-Za-z0-9._~-] (BullMQ refuses `:`
 * and plain integers) and never include the file name, so an overlapping file maps to the
 * same keys. Three forms, told apart by their prefix:
 *
 *   ref.<businessCustomerId>.<orderRef>     orderRef is 1-64 of [A-Za-z0-9._~-]
 *   refh.<businessCustomerId>.<sha256(orderRef), 32 hex>   any other orderRef
 *   sha.<sha256(canonical payload), 32 hex>.<occurrence>   no orderRef
 */
const SIMPLE_REF = /^[A-Za-z0-9._~-]{1,64}$/;

/** Key of an order identified by its customer's reference. */
export function orderRefKey(businessCustomerId: number, orderRef: string): string {
  if (SIMPLE_REF.test(orderRef)) return `ref.${businessCustomerId}.${orderRef}`;
  return `refh.${businessCustomerId}.${sha256(orderRef).slice(0, 32)}`;
}

/**
 * Key of an order without orderRef: the hash of its canonical payload plus its occurrence
 * number among identical orders in the file (1 for the first), so two identical rows stay two
 * orders and a second import of the file produces the same two keys.
 */
export function payloadKey(payloadHash: string, occurrence: number): string {
  return `sha.${payloadHash.slice(0, 32)}.${occurrence}`;
}

/** sha256 (hex) of the canonical form of a payload. */
export function payloadHash(payload: OrderPayload): string {
  return sha256(canonicalPayload(payload));
}

/**
 * JSON with a fixed key order and products sorted, so the same order written with columns
 * (or product lines) in another order hashes the same.
 */
export function canonicalPayload(payload: OrderPayload): string {
  const { address } = payload.recipient;
  const products = payload.products
    .map((p) => [p.productId, p.quantity] as const)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return JSON.stringify([
    payload.businessCustomerId,
    [
      address.firstName,
      address.lastName,
      address.street,
      address.streetNumber,
      address.postalCode,
      address.city,
      address.countryCode,
    ],
    payload.recipient.languageCode,
    payload.recipient.email,
    payload.recipient.telephoneNumber,
    products,
    // Fields added to the table after these keys were first given: appended only when present,
    // so every key given before stays the same.
    ...extraFields(payload),
  ]);
}

/**
 * The sent fields outside the layout above, as [name, value] pairs: the order's in table order,
 * then the product lines' sorted (like the products, their order does not matter).
 */
function extraFields(payload: OrderPayload): [string, string | number][] {
  const head: [string, string | number][] = [];
  const lines: [string, string | number][] = [];
  payloadLines(payload, undefined).forEach((line, index) => {
    for (const field of ORDER_FIELDS) {
      const value = line[field];
      if (HASHED.has(field) || value === undefined) continue;
      if (PRODUCT_FIELDS.has(field)) lines.push([field, value]);
      else if (index === 0) head.push([field, value]);
    }
  });
  return [...head, ...lines.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))];
}

/** The fields canonicalPayload's fixed layout covers (orderRef is never in a payload). */
const HASHED: ReadonlySet<string> = new Set([
  'orderRef',
  'businessCustomerId',
  'firstName',
  'lastName',
  'street',
  'streetNumber',
  'postalCode',
  'city',
  'countryCode',
  'languageCode',
  'email',
  'telephoneNumber',
  'productId',
  'quantity',
]);

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
