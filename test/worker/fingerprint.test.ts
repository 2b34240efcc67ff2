import { describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../src/ledger/fingerprint.js';

/**
 * Ledger entries keep these fingerprints for their whole retention, and a re-import compares with
 * them: the same content must give the same text in every version. Values as the first version wrote them.
 */
describe('fingerprintOf', () => {
  it('gives the fingerprints earlier versions stored, field order and product order aside', () => {
    const order = {
      businessCustomerId: 1001,
      recipient: {
        address: {
          firstName: 'Jan',
          lastName: 'de Vries',
          street: 'Keizersgracht',
          streetNumber: 112,
          postalCode: '1015 CX',
          city: 'Amsterdam',
          countryCode: 'NL',
        },
        languageCode: 'nl',
        email: 'jan@example.nl',
        telephoneNumber: '+31612345678',
      },
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
