import type { Ledger, LedgerEntry } from '../ledger/ledger.js';
import type { RemoteId } from '../delivery/remoteId.js';
import { accountKey } from '../ingest/accountKey.js';

/** What the directory knows of one employee. */
export type CustomerLookup =
  /** `customerId` with the JSON type account creation returned it in. */
  | { found: true; customerId: RemoteId; key: string }
  | { found: false; key: string; entry: LedgerEntry | undefined; reason: string };

/**
 * The mapping (environment, companyId, email) -> customerId. It is the accounts ledger itself:
 * the entry keyed by accountKey(companyId, email) gets the customerId as its remote id in the
 * same atomic step that marks the account delivered, so the mapping can never disagree with
 * the ledger, and the environment's key prefix keeps one environment's ids from the other.
 */
export class CustomerDirectory {
  constructor(private readonly ledger: Ledger) {}

  async find(companyId: string, email: string): Promise<CustomerLookup> {
    const key = accountKey(companyId, email);
    const entry = await this.ledger.get(key);
    // A remote id is only ever written by a delivered settle; it survives a later forced re-import.
    if (entry?.remoteId !== undefined && entry.remoteId !== '') return { found: true, customerId: entry.remoteId, key };
    return { found: false, key, entry, reason: whyMissing(entry) };
  }
}

function whyMissing(entry: LedgerEntry | undefined): string {
  switch (entry?.state) {
    case undefined:
      return 'no account for this employee was registered by bulkorder in this environment (import the employee with `bulkorder accounts import`).';
    case 'queued':
    case 'sending':
      return `the account is still being registered (batch ${entry.batchId}); try again when the batch has settled.`;
    case 'held':
      return 'its registration is held for review (sent without an answer): check on the service whether it exists.';
    case 'dead':
      return entry.httpStatus === 409
        ? 'the service says the account already exists, but it was registered outside bulkorder, so its customerId is not known here.'
        : `its registration was refused (HTTP ${entry.httpStatus ?? '?'} ${entry.code ?? ''}: ${entry.message ?? ''}).`;
    default:
      return `the ledger has it as ${entry?.state ?? 'unknown'} without a customerId.`;
  }
}
