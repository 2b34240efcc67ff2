import type { AccountPayload } from '../ingest/accountColumns.js';
import { ACCOUNT_COLUMNS } from '../ingest/accountColumns.js';
import { ACCOUNT_RESULTS } from './accountResults.js';
import { ACCOUNT_WORDING } from './accountWording.js';
import { openAccountSource } from '../ingest/openAccountSource.js';
import { ACCOUNTS_QUEUE, REGISTER_ACCOUNTS } from '../queues.js';
import { subPrefix } from '../keyspace.js';
import type { Outcome } from '../delivery/classifyOutcome.js';
import { createCafetariaplanClient, type AccountOutcome } from '../delivery/cafetariaplanClient.js';
import { cliOf, type RecordKind } from './recordKind.js';

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
  jobName: REGISTER_ACCOUNTS,
  // Inside the environment's hash tag on a Redis Cluster: accounts get a slot of their own.
  prefix: (environmentPrefix) => subPrefix(environmentPrefix, 'accounts'),
  // The ledger entry holds the customerId that login needs long after registration.
  retentionMs: (delivery) => delivery.accountRetentionMs,
  results: ACCOUNT_RESULTS,
  wording: ACCOUNT_WORDING,
  customerOf: (payload) => payload.companyId,
  cli: cliOf('accounts'),
  connect(settings, deps) {
    const client = createCafetariaplanClient(settings, deps);
    return {
      send: async (account, record) =>
        asDeliveryOutcome(await client.createAccount(account, { idempotencyKey: record.key })),
    };
  },
  reportResults(results) {
    const exists = results.byOutcome['account-exists'] ?? 0;
    return exists === 0
      ? []
      : [
          `  ${exists} account${exists === 1 ? '' : 's'} already existed on the service (account-exists): not registered again, customerId unknown here`,
        ];
  },
};

/** The ledger keeps the new account's customerId as its remote id: that entry is the customerId mapping. */
function asDeliveryOutcome(outcome: AccountOutcome): Outcome {
  if (outcome.kind !== 'delivered') return outcome;
  return { kind: 'delivered', status: outcome.status, body: outcome.body, remoteId: outcome.customerId };
}
