import type { RecordWording } from './recordWording.js';

/** The API's answer to a second account for one employee (the simulator's, and the likely one). */
export const ACCOUNT_EXISTS_STATUS = 409;

/** How reasons name an account; a 409 says plainly that the account exists. */
export const ACCOUNT_WORDING: RecordWording = {
  noun: 'account',
  heldHint:
    'Check on the service whether the account exists; it is never registered again automatically (a re-import skips it while it is held).',
  refusal(outcome) {
    if (outcome.status !== ACCOUNT_EXISTS_STATUS) return undefined;
    return (
      `The account already exists on the service (HTTP 409 ${outcome.code}: ${outcome.message}). It was registered ` +
      'outside this tool or before its ledger knew it, so its customerId is not known here; it was not registered again.'
    );
  },
};
