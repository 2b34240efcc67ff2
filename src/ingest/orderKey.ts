import { createHash } from 'node:crypto';
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
    [address.firstName, address.lastName, address.street, address.streetNumber, address.postalCode, address.city, address.countryCode],
    payload.recipient.languageCode,
    payload.recipient.email,
    payload.recipient.telephoneNumber,
    products,
  ]);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
