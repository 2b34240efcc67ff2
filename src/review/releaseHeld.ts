import type { ReviewInput } from '../ledger/ledger.js';
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
  const released = new Map<string, { previousBatchId: string; record: string; parkedAt: number }>();
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
              previousBatchId: result.previousBatchId,
              record: result.record,
              parkedAt: record.parkedAt,
            });
            outcomes.push('reserved');
          } else
            outcomes.push(
              result.state === 'delivered'
                ? 'skippedDelivered'
                : result.state === 'held'
                  ? 'skippedHeld'
                  : 'skippedQueued',
            );
        }
        return outcomes;
      },
      async undo(record, batchId) {
        const facts = released.get(record.key);
        if (facts !== undefined)
          await ledger.unrelease(record.key, batchId, facts.previousBatchId, facts.record, facts.parkedAt);
      },
    },
    deps,
  );
}
