import type { AccountPayload } from '../accounts/accountColumns.js';
import { ACCOUNT_COLUMNS } from '../accounts/accountColumns.js';
import { ACCOUNT_RESULTS } from '../accounts/accountResults.js';
import { ACCOUNT_WORDING } from '../accounts/accountWording.js';
import { openAccountSource } from '../accounts/openAccountSource.js';
import { ACCOUNTS_QUEUE, REGISTER_ACCOUNT, REGISTER_ACCOUNTS } from '../queues.js';
import { subPrefix } from '../keyspace.js';
import type { RecordKind } from './recordKind.js';

/**
 * Employee accounts on the Cafetariaplan API: `bulkorder accounts import|status|dead-letters|review ...`.
 * Every Redis key of accounts lives under `<bulkorder:<env>>:accounts`: their ledger (which holds
 * each employee's customerId), batches, dead letters, held records, circuit breaker and queue.
 * Account dead letters never mix with order dead letters, and customerIds of one environment are
 * never found from the other.
 */
export const ACCOUNTS: RecordKind<AccountPayload> = {
  name: 'accounts',
  noun: ACCOUNT_COLUMNS.noun,
  columns: ACCOUNT_COLUMNS,
  openSource: openAccountSource,
  api: 'cafetariaplan',
  queueName: ACCOUNTS_QUEUE,
  jobName: REGISTER_ACCOUNT,
  chunkJobName: REGISTER_ACCOUNTS,
  // Inside the environment's hash tag on a Redis Cluster: accounts get a slot of their own.
  prefix: (environmentPrefix) => subPrefix(environmentPrefix, 'accounts'),
  // The ledger entry holds the customerId that login needs long after registration.
  retentionMs: (delivery) => delivery.accountRetentionMs,
  results: ACCOUNT_RESULTS,
  wording: ACCOUNT_WORDING,
  customerOf: (payload) => payload.companyId,
  cli: 'bulkorder accounts',
  reportResults(results) {
    const exists = results.byOutcome['account-exists'] ?? 0;
    return exists === 0 ? [] : [`  ${exists} account${exists === 1 ? '' : 's'} already existed on the service (account-exists): not registered again, customerId unknown here`];
  },
};
