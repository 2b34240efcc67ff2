import { describe, expect, it } from 'vitest';
import { canonicalPayload, orderRefKey, payloadHash, payloadKey } from '../../src/ingest/orderKey.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { JAN_RECIPIENT } from '../helpers/fixtures.js';

// BullMQ refuses job ids with ':' and ids that are plain integers.
const SAFE = /^[A-Za-z0-9._~-]+$/;

const payload: OrderPayload = {
  businessCustomerId: 1001,
  recipient: JAN_RECIPIENT,
  products: [
    { productId: 5002, quantity: 1 },
    { productId: 5001, quantity: 3 },
  ],
};

describe('order keys', () => {
  it('are readable for simple orderRefs and hashed otherwise, always BullMQ-safe and non-numeric', () => {
    expect(orderRefKey(1001, 'GIFT-2025-0001')).toBe('ref.1001.GIFT-2025-0001');
    for (const ref of ['order 12', 'ÜBER-1', 'a:b', 'x'.repeat(65), '12', '../..', '']) {
      const key = orderRefKey(1001, ref);
      expect(key, ref).toMatch(SAFE);
      expect(Number.isInteger(Number(key))).toBe(false);
    }
    expect(orderRefKey(1001, 'a:b')).toMatch(/^refh\.1001\.[0-9a-f]{32}$/);
    expect(orderRefKey(1001, '12')).toBe('ref.1001.12');
  });

  it('never let the readable and the hashed forms collide', () => {
    const ref = 'with space';
    const hashed = orderRefKey(1001, ref);
    const lookalike = hashed.replace(/^refh\.1001\./, ''); // a readable ref equal to the hash text
    expect(orderRefKey(1001, lookalike)).not.toBe(hashed);
  });

  it('depend on the customer: the same orderRef for two customers is two orders', () => {
    expect(orderRefKey(1001, 'R-1')).not.toBe(orderRefKey(1002, 'R-1'));
    expect(orderRefKey(1001, 'R 1')).not.toBe(orderRefKey(1002, 'R 1'));
  });

  it('hash the canonical payload: field and product order do not matter, any value does', () => {
    const reordered: OrderPayload = {
      products: [...payload.products].reverse(),
      recipient: {
        telephoneNumber: '+31612345678',
        email: 'jan.devries@example.nl',
        languageCode: 'nl',
        address: { ...payload.recipient.address },
      },
      businessCustomerId: 1001,
    };
    expect(canonicalPayload(reordered)).toBe(canonicalPayload(payload));
    expect(payloadHash(reordered)).toBe(payloadHash(payload));
    const other = structuredClone(payload);
    other.products[0]!.quantity = 2;
    expect(payloadHash(other)).not.toBe(payloadHash(payload));
  });

  it('count occurrences of identical orders', () => {
    const hash = payloadHash(payload);
    expect(payloadKey(hash, 1)).toBe(`sha.${hash.slice(0, 32)}.1`);
    expect(payloadKey(hash, 2)).not.toBe(payloadKey(hash, 1));
    expect(payloadKey(hash, 1)).toMatch(SAFE);
  });
});
