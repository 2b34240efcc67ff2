import type { ParkedItem } from './parkedStore.js';
import { requeueParked, type RequeueBatch, type RequeueDeps, type RequeueOutcome } from './requeueParked.js';

/**
 * `dead-letters retry`: sends dead letters again as they are (for a fault fixed on the server's
 * side). The ledger reserves a dead key like an import does; the dead letter stays listed until
 * its order is delivered (the worker's delivered settle removes it) or is replaced by the new one
 * if it fails again. Orders delivered, held or queued meanwhile are skipped, not sent.
 */
export function retryDeadLetters(items: readonly ParkedItem[], deps: RequeueDeps): Promise<RequeueBatch[]> {
  const { ledger } = deps;
  return requeueParked(
    items,
    {
      label: 'dead-letters retry',
      async reserve(items, batchId) {
        const results = await ledger.reserveRequeued(
          items.map(({ job }) => job),
          { name: deps.kind.jobName },
          batchId,
        );
        return results.map((result): RequeueOutcome => {
          switch (result.outcome) {
            case 'reserved':
              return 'reserved';
            case 'delivered':
              return 'skippedDelivered';
            case 'held':
              return 'skippedHeld';
            default:
              return 'skippedQueued';
          }
        });
      },
    },
    deps,
  );
}
