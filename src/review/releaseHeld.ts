import type { Released, ReviewInput } from '../ledger/ledger.js';
import type { ParkedItem } from '../deadLetter/parkedStore.js';
import {
  requeueParked,
  type RequeueBatch,
  type RequeueDeps,
  type RequeueOutcome,
} from '../deadLetter/requeueParked.js';

/** What `review release` did: the batches it queued, and the keys it could not send (nothing of them kept). */
export interface ReleaseReport {
  made: RequeueBatch[];
  /**
   * Held orders that kept no payload (a reconciler held them after their job was gone): there is nothing
   * to send, so they stay held: a person resolves them as delivered, or imports their rows again under new orderRefs.
   */
  keptNothing: string[];
}

/**
 * `review release`: a person checked that a held order is not on the service, so it is sent again.
 * Each order moves held -> queued in the ledger (recorded as released by `review.by`), its held
 * record removed, and its job is added as in an import, in a new batch. If the job cannot be
 * added the order is put back on hold. One whose record kept no payload stays held (ReleaseReport.keptNothing).
 */
export async function releaseHeld(
  items: readonly ParkedItem[],
  review: ReviewInput,
  deps: RequeueDeps,
): Promise<ReleaseReport> {
  const { ledger } = deps;
  const released = new Map<string, Omit<Released, 'parkedAt'>>();
  const sendable = items.filter((item) => item.record.payload !== null);
  const keptNothing = items.filter((item) => item.record.payload === null).map((item) => item.record.key);
  const made = await requeueParked(
    sendable,
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
  return { made, keptNothing };
}

/** What a release says about the held orders it could not send, or '' when there were none. */
export function keptNothingText(keys: readonly string[], noun: string): string {
  if (keys.length === 0) return '';
  const shown = keys.slice(0, 10).join(', ') + (keys.length > 10 ? `, and ${keys.length - 10} more` : '');
  return (
    `${keys.length} held ${noun}${keys.length === 1 ? '' : 's'} not released: nothing of ${keys.length === 1 ? 'it' : 'them'} was kept to send ` +
    `(held after ${keys.length === 1 ? 'its' : 'their'} job was gone): check the service; \`review resolve --delivered\` where it is there, ` +
    `else import the row again under a new orderRef (this key stays held, never sent) (${shown})`
  );
}

/** Why a held record was not released: the state its ledger entry is in now. */
function skippedOutcome(state: string): RequeueOutcome {
  if (state === 'delivered') return 'skippedDelivered';
  return state === 'held' ? 'skippedHeld' : 'skippedQueued';
}
