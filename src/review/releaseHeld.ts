import type { Released, ReviewInput } from '../ledger/ledger.js';
import type { ParkedItem } from '../deadLetter/parkedStore.js';
import {
  requeueParked,
  type RequeueBatch,
  type RequeueDeps,
  type RequeueOutcome,
} from '../deadLetter/requeueParked.js';

/**
 * `review release`: a person checked that a held order is not on the service, so it is sent again.
 * Each order moves held -> queued in the ledger (recorded as released by `review.by`), its held
 * record removed, and its job is added as in an import, in a new batch. If the job cannot be
 * added the order is put back on hold.
 */
export function releaseHeld(
  items: readonly ParkedItem[],
  review: ReviewInput,
  deps: RequeueDeps,
): Promise<RequeueBatch[]> {
  const { ledger } = deps;
  const released = new Map<string, Omit<Released, 'parkedAt'>>();
  return requeueParked(
    items,
    {
      label: 'review release',
      async reserve(items, batchId) {
        const outcomes: RequeueOutcome[] = [];
        for (const { record, job } of items) {
          const result = await ledger.release(record.key, batchId, review, job);
          if (result.outcome === 'released') {
            released.set(record.key, {
              releasedBatchId: batchId,
              previousBatchId: result.previousBatchId,
              record: result.record,
              chunkId: job.id,
            });
            outcomes.push('reserved');
          } else outcomes.push(skippedOutcome(result.state));
        }
        return outcomes;
      },
      async undo(record) {
        const facts = released.get(record.key);
        if (facts !== undefined) await ledger.unrelease(record.key, { ...facts, parkedAt: record.parkedAt });
      },
    },
    deps,
  );
}

/** Why a held record was not released: the state its ledger entry is in now. */
function skippedOutcome(state: string): RequeueOutcome {
  if (state === 'delivered') return 'skippedDelivered';
  return state === 'held' ? 'skippedHeld' : 'skippedQueued';
}
