import type { DeliveryJobData } from '../orderJob.js';
import type { RecordWording } from '../worker/deliverOrder.js';
import type { AccountPayload } from './accountColumns.js';

/** BullMQ queue of employee accounts to register, in the accounts keyspace. */
export const ACCOUNTS_QUEUE = 'accounts';

/** Job name of one account registration. */
export const REGISTER_ACCOUNT = 'register-account';

/** The data of one registration job: the same shape as an order job, with an account payload. */
export type AccountJobData = DeliveryJobData<AccountPayload>;

/** The API's answer to a second account for one employee (the simulator's, and the likely one). */
export const ACCOUNT_EXISTS_STATUS = 409;

/**
 * Every Redis key of employee accounts lives under `<bulkorder:<env>>:accounts`: their ledger
 * (which holds each employee's customerId), batches, dead letters, held records, circuit
 * breaker and BullMQ queue. Account dead letters never mix with order dead letters, and
 * customerIds of one environment are never found from the other.
 */
export function accountsPrefix(environmentPrefix: string): string {
  return `${environmentPrefix}:accounts`;
}

/** How reasons name an account; a 409 says plainly that the account exists. */
export const ACCOUNT_WORDING: RecordWording = {
  noun: 'account',
  heldHint: 'Check on the service whether the account exists; it is never registered again automatically (a re-import skips it while it is held).',
  refusal(outcome) {
    if (outcome.status !== ACCOUNT_EXISTS_STATUS) return undefined;
    return (
      `The account already exists on the service (HTTP 409 ${outcome.code}: ${outcome.message}). It was registered ` +
      'outside this tool or before its ledger knew it, so its customerId is not known here; it was not registered again.'
    );
  },
};
