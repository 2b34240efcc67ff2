import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { fingerprintOf } from '../../src/ledger/fingerprint.js';
import { JAN_RECIPIENT } from '../helpers/fixtures.js';

/**
 * Ledger entries keep these fingerprints for their whole retention, and a re-import compares with
 * them: the same content must give the same text in every version. Values as the first version wrote them.
 */
describe('fingerprintOf', () => {
  it('gives the fingerprints earlier versions stored, field order and product order aside', () => {
    const order = {
      businessCustomerId: 1001,
      recipient: { ...JAN_RECIPIENT, email: 'jan@example.nl' },
      products: [
        { productId: 5001, quantity: 2 },
        { productId: 42, quantity: 1 },
      ],
    };
    const stored = {
      hash: '7a819d3891750fe0634a3cfab7f85a79',
      parts: 'businessCustomerId=fe675f;products=ddc7d8;recipient=e640d7',
    };
    expect(fingerprintOf(order)).toEqual(stored);
    const { products, recipient, businessCustomerId } = order;
    expect(fingerprintOf({ products: [...products].reverse(), recipient, businessCustomerId })).toEqual(stored);
    expect(fingerprintOf({ b: undefined, a: [3, 1, { z: 1, y: null }], c: 'x' })).toEqual({
      hash: '5d0bb22942f98d051bcca6adc1e4ca20',
      parts: 'a=c02a22;b=74234e;c=ba2df4',
    });
    expect(fingerprintOf('text')).toEqual({ hash: '1e1d0f251d3a76fa2b1bfc8116407857', parts: '' });
    expect(fingerprintOf(null)).toEqual({ hash: '74234e98afe7498fb5daf1f36ac2d78a', parts: '' });
  });
});

/** The fingerprint as the first version computed it (arrays and closures per object): the values to keep. */
function firstVersion(payload: unknown): { hash: string; parts: string } {
  const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
  const canonical = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(canonical).sort().join(',')}]`;
    if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const fields = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`);
      return `{${fields.join(',')}}`;
    }
    return JSON.stringify(value) ?? 'null';
  };
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    return { hash: sha(canonical(payload)).slice(0, 32), parts: '' };
  const record = payload as Record<string, unknown>;
  const parts = Object.keys(record)
    .sort()
    .map((key) => `${key}=${sha(canonical(record[key])).slice(0, 6)}`);
  return { hash: sha(canonical(payload)).slice(0, 32), parts: parts.join(';') };
}

describe('fingerprintOf, however it builds its canonical JSON', () => {
  it('gives what the first version gave for odd shapes too', () => {
    const payloads: unknown[] = [
      {},
      { a: {} },
      { a: { x: undefined }, b: [] },
      { 'quote"d': 1, 'back\\slash': 'é\n', ünï: '\u2028', '': 0 },
      { nested: { z: [{ b: 2, a: 1 }, { a: 0 }, 'x', 3, null, true], y: { c: { d: { e: 'deep' } } } } },
      { n: [-0, 1e21, 0.1, Number.NaN, Number.POSITIVE_INFINITY], s: ['b', 'a', 'B', '10', '9'] },
      { list: [[3, 2], [1], []], f: false, t: true, nil: null, u: undefined },
      { a: [undefined, 1], b: [{ k: undefined }] },
      [{ b: 1, a: 2 }, 'x'],
      42,
      'text with "quotes"',
      undefined,
    ];
    for (const payload of payloads)
      expect(fingerprintOf(payload), JSON.stringify(payload)).toEqual(firstVersion(payload));
  });
});
