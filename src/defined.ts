import { BulkorderError } from './errors.js';

/**
 * `value`, which the caller has proven present (an index a line above checked, a key the same
 * function set); throws INTERNAL naming `what` if that proof is ever wrong, instead of a `!`
 * that would let `undefined` travel on.
 */
export function defined<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new BulkorderError('INTERNAL', `internal: ${what} is missing`);
  return value;
}
