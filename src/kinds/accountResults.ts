import { RESULT_TAIL_COLUMNS, type ResultsLayout } from './resultsLayout.js';
import { encodeRemoteId } from '../delivery/remoteId.js';
import type { ACCOUNT_FIELDS, AccountPayload } from '../ingest/accountColumns.js';
import { ACCOUNT_EXISTS_STATUS } from './accountWording.js';

/** Columns of `<name>.results.csv` for an employee file. */
const ACCOUNT_RESULT_COLUMNS = [
  'accountKey',
  'email',
  'companyId',
  'lines',
  'outcome',
  'customerId',
  ...RESULT_TAIL_COLUMNS,
] as const;

/**
 * The results file of an employee file: every employee with the customerId the service
 * returned (for a registration of this batch or an earlier one), or why there is none.
 * A 409 is `account-exists`, not a generic dead letter: the account is there, only its
 * customerId is unknown to us.
 */
export const ACCOUNT_RESULTS: ResultsLayout<AccountPayload> = {
  columns: ACCOUNT_RESULT_COLUMNS,
  keyColumn: 'accountKey',
  remoteIdColumn: 'customerId',
  describe(item, entry) {
    // A rejected row has no payload; its cells are under the file's headers, usually the field names.
    const identity = item.kind === 'valid' ? item.payload : (item.rows[0] ?? {});
    const field = (name: (typeof ACCOUNT_FIELDS)[number]): string =>
      (identity as Partial<Record<string, string>>)[name] ?? '';
    return {
      accountKey: item.key ?? '',
      email: field('email'),
      companyId: field('companyId'),
      customerId: entry?.remoteId === undefined ? '' : encodeRemoteId(entry.remoteId),
    };
  },
  refine: (outcome, entry) =>
    outcome === 'dead-lettered' && entry?.httpStatus === ACCOUNT_EXISTS_STATUS ? 'account-exists' : undefined,
};
