import type { AssembleContext } from './openRecordSource.js';
import type { RecordItem, RowError } from './types.js';
import type { AccountPayload } from './accountColumns.js';
import type { AccountUnit } from './accountUnit.js';

/**
 * Second pass over one bucket of employee rows: the first row of an employee (companyId +
 * email) stands; every later row of the same employee is rejected as DUPLICATE_ACCOUNT, since
 * the service keeps one account per employee and silently picking one of two differing rows
 * would be a guess. Items come out in line order.
 */
export function* assembleAccounts(
  units: readonly AccountUnit[],
  context: AssembleContext,
): Generator<RecordItem<AccountPayload>> {
  const firstLine = new Map<string, number>();
  const ordered = [...units].sort((a, b) => a.rows[0].line - b.rows[0].line);
  for (const unit of ordered) {
    const row = unit.rows[0];
    const errors: RowError[] = [...row.errors];
    const earlier = unit.key === undefined ? undefined : firstLine.get(unit.key);
    if (unit.key !== undefined && earlier === undefined) firstLine.set(unit.key, row.line);
    if (earlier !== undefined) {
      errors.push({
        line: row.line,
        column: 'email',
        code: 'DUPLICATE_ACCOUNT',
        message: `this employee (same companyId and email) is also on line ${earlier}; an employee gets one account, so remove one of the rows.`,
      });
    }
    const cells = Object.fromEntries(context.columns.map((column, i) => [column, row.cells[i] ?? '']));
    const base = { file: context.file, lines: [row.line], rows: [cells], rowLines: [row.line] };
    if (errors.length === 0 && row.value !== undefined && unit.key !== undefined) {
      yield { kind: 'valid', key: unit.key, ...base, payload: row.value, notes: row.notes };
    } else {
      yield {
        kind: 'rejected',
        ...(unit.key === undefined ? {} : { key: unit.key }),
        ...base,
        errors: errors.sort((a, b) => a.line - b.line),
      };
    }
  }
}
