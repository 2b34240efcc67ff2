import type { BatchStore } from './batchStore.js';
import { IMPORT_OWNER_TTL_MS } from './batchStore.js';

/** A running heartbeat of one importing batch. */
export interface ImportHeartbeat {
  /** True once the batch was found closed as interrupted (the importer must stop: its work is taken over). */
  readonly lost: boolean;
  stop(): void;
}

/**
 * Renews the batch's owner key every fifth of its lifetime while the importer works, so a
 * reconciler can tell a slow importer from a dead one. A failed renewal (Redis blip) is retried
 * at the next beat; the import itself notices a Redis outage on its own.
 */
export function startImportHeartbeat(batches: BatchStore, batchId: string): ImportHeartbeat {
  let lost = false;
  const timer = setInterval(() => {
    batches.heartbeat(batchId).then(
      (alive) => {
        if (!alive) lost = true;
      },
      () => undefined,
    );
  }, IMPORT_OWNER_TTL_MS / 5);
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    stop: () => clearInterval(timer),
  };
}
