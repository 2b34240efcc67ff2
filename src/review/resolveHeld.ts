import type { Ledger, ReviewInput } from '../ledger/ledger.js';
import type { ParkedItem } from '../deadLetter/parkedStore.js';

/** What `review resolve --delivered` did with one held order. */
export interface ResolveOutcome {
  key: string;
  /** `resolved`, or the ledger state that kept it from being resolved (it moved on meanwhile). */
  outcome: string;
}

/**
 * `review resolve --delivered`: a person found the order on the service, so it is recorded as
 * delivered (by them, with the remote id if they give one) and never sent. Its batch counts it
 * delivered; a later import of the same order skips it as already delivered.
 */
export async function resolveHeld(
  items: readonly ParkedItem[],
  ledger: Ledger,
  review: ReviewInput & { remoteId?: string },
): Promise<ResolveOutcome[]> {
  const outcomes: ResolveOutcome[] = [];
  for (const { record } of items)
    outcomes.push({ key: record.key, outcome: await ledger.resolveDelivered(record.key, review) });
  return outcomes;
}
