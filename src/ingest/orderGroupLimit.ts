import type { GroupLimit } from './groupLimit.js';
import type { OrderUnit } from './orderUnit.js';

/** The default and documented maximum of product lines in one order (`--max-lines-per-order`). */
export const DEFAULT_MAX_LINES_PER_ORDER = 1000;

/**
 * Orders over the cap of product lines are refused whole while their bucket is read back, never
 * held: the order's first row stands for it in the rejects file, and the error names every line.
 * Only orderRef groups are capped; identical orders without orderRef are separate orders.
 */
export function orderGroupLimit(maxLines: number): GroupLimit<OrderUnit> {
  return {
    maxRows: maxLines,
    applies: (unit) => unit.kind === 'ref',
    linesOf: (unit) => unit.rows.map((row) => row.line),
    oversized(first, rows, lines) {
      const row = first.rows[0]!;
      return {
        ...first,
        whole: false,
        rows: [row],
        errors: [
          ...first.errors,
          {
            line: row.line,
            column: 'orderRef',
            value: first.orderRef ?? '',
            code: 'ORDER_TOO_MANY_LINES',
            message:
              `orderRef '${first.orderRef ?? ''}' has ${rows} product lines (lines ${lines}); at most ${maxLines} are accepted. ` +
              `The order is refused whole without being held in memory, so only its first line is in the rejects file: ` +
              `split it into orders of at most ${maxLines} lines, each with its own orderRef, in the source.`,
          },
        ],
      };
    },
  };
}
