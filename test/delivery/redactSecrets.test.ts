/** redactSecrets on its own: what it replaces, where, and that an answer without a secret is not copied. */
import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/delivery/redactSecrets.js';

const SECRET = 's3cr3t/value+x';

describe('redactSecrets', () => {
  it('replaces the secret raw, URL- and form-encoded, in values and keys at any depth of arrays and objects', () => {
    const body = {
      a: `raw ${SECRET}`,
      list: [1, null, { deep: `url ${encodeURIComponent(SECRET)}` }],
      [`key-${SECRET}`]: `form ${new URLSearchParams({ s: SECRET }).toString().slice(2)}`,
    };
    expect(redactSecrets(body, [SECRET])).toEqual({
      a: 'raw [redacted]',
      list: [1, null, { deep: 'url [redacted]' }],
      'key-[redacted]': 'form [redacted]',
    });
    expect(body.a).toBe(`raw ${SECRET}`); // the original is left as it was
  });

  it('gives an answer without any secret back as it is, not a copy', () => {
    const body = { orderId: 'A-1', lines: [{ sku: 'X', quantity: 2 }], note: null };
    expect(redactSecrets(body, [SECRET, 'other-token'])).toBe(body);
    expect(redactSecrets('plain text', [SECRET])).toBe('plain text');
  });

  it('walks objects 21 levels deep and no deeper, as before', () => {
    const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { n: nest(depth - 1, leaf) });
    const reached = nest(21, SECRET);
    expect(JSON.stringify(redactSecrets(reached, [SECRET]))).not.toContain(SECRET);
    const beyond = nest(22, { s: SECRET });
    expect(redactSecrets(beyond, [SECRET])).toBe(beyond);
  });

  it('ignores secrets shorter than 4 characters', () => {
    const body = { a: 'abc abc' };
    expect(redactSecrets(body, ['abc'])).toBe(body);
  });
});
