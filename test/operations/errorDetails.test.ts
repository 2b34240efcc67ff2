import { describe, expect, it } from 'vitest';
import { errorDetails, reasonWithDetails } from '../../src/delivery/errorDetails.js';

describe("the API's error details in exports", () => {
  it('turns details into one line a person can act on', () => {
    const body = {
      code: 'PRODUCT_UNKNOWN',
      message: 'Unknown product',
      details: [
        { path: 'products[0].productId', problem: 'product 5999 is not in the catalogue' },
        'second thing',
        { x: 1 },
      ],
    };
    expect(errorDetails(body)).toBe(
      'products[0].productId: product 5999 is not in the catalogue; second thing; {"x":1}',
    );
    expect(reasonWithDetails('422 PRODUCT_UNKNOWN: Unknown product', body)).toBe(
      '422 PRODUCT_UNKNOWN: Unknown product (details: products[0].productId: product 5999 is not in the catalogue; second thing; {"x":1})',
    );
    expect(reasonWithDetails('503', { code: 'X' })).toBe('503');
    expect(errorDetails('<html>')).toBe('');
  });
});
