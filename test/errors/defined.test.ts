import { describe, expect, it } from 'vitest';
import { BulkorderError, defined } from '../../src/errors.js';
import { flatPairs } from '../../src/redis/flatPairs.js';

describe('defined (issue 32: what a non-null assertion stated, checked)', () => {
  it('gives back a present value, falsy ones included', () => {
    expect(defined(0, 'a count')).toBe(0);
    expect(defined('', 'a cell')).toBe('');
    expect(defined(null, 'a reply')).toBeNull();
  });

  it('throws INTERNAL naming what was missing', () => {
    let thrown: unknown;
    try {
      defined([1][1], 'the second item');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BulkorderError);
    expect((thrown as BulkorderError).code).toBe('INTERNAL');
    expect((thrown as BulkorderError).message).toContain('the second item');
  });
});

describe('flatPairs', () => {
  it('pairs a flat reply in order and drops an odd last item', () => {
    expect([...flatPairs(['a', '1', 'b', '2'])]).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect([...flatPairs(['a', '1', 'c'])]).toEqual([['a', '1']]);
    expect([...flatPairs([])]).toEqual([]);
  });
});
