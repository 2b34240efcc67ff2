import type { GroupLimit } from './groupLimit.js';
import type { OrderUnit } from './orderUnit.js';
import type { RowError } from './types.js';
import { defined } from '../errors.js';

/** The default and documented maximum of product lines in one order (`--max-lines-per-order`). */
export const DEFAULT_MAX_LINES_PER_ORDER = 1000;

/**
 * Groups over the cap of product lines are refused whole while their bucket is read back, never
 * held: the group's first row stands for it in the rejects file, and the error names every line.
 * Two kinds of group share a bucket key and so are capped: the rows of one orderRef (one order,
 * ORDER_TOO_MANY_LINES) and identical orders without orderRef (their payload hash; each is its
 * own order, but they are counted together, so 400,000 copies of one row would otherwise sit in
 * one bucket: IDENTICAL_ORDERS_TOO_MANY). Rejected records without orderRef stand alone.
 */
export function orderGroupLimit(maxLines: number): GroupLimit<OrderUnit> {
  return {
    maxRows: maxLines,
    applies: (unit) => unit.kind === 'ref' || unit.kind === 'hash',
    linesOf: (unit) => unit.rows.map((row) => row.line),
    oversized(first, rows, lines) {
      const row = defined(first.rows[0], 'the first row of an oversized unit');
      const error: RowError =
        first.kind === 'ref'
          ? {
              line: row.line,
              column: 'orderRef',
              value: first.orderRef ?? '',
              code: 'ORDER_TOO_MANY_LINES',
              message:
                `orderRef '${first.orderRef ?? ''}' has ${rows} product lines (lines ${lines}); at most ${maxLines} are accepted. ` +
                `The order is refused whole without being held in memory, so only its first line is in the rejects file: ` +
                `split it into orders of at most ${maxLines} lines, each with its own orderRef, in the source.`,
            }
          : {
              line: row.line,
              code: 'IDENTICAL_ORDERS_TOO_MANY',
              message:
                `the same order without orderRef is repeated over ${rows} product lines (lines ${lines}); at most ${maxLines} are accepted ` +
                `for identical orders without orderRef, as for one order. They are refused together without being held in memory, ` +
                `so only the first line is in the rejects file: if they are one order, put it on one line with the total quantity; ` +
                `if they are separate gifts, give each its own orderRef.`,
            };
      // A `solo` unit is assembled as a rejected record of its own; a `ref` unit with an error is rejected by refOrder.
      return {
        ...first,
        kind: first.kind === 'ref' ? 'ref' : 'solo',
        whole: false,
        rows: [row],
        errors: [...first.errors, error],
      };
    },
  };
}
