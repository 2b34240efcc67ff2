import type { Queue } from 'bullmq';
import type { PutBackChunks } from './putBackChunks.js';

/**
 * Promotes the jobs of one batch that rest delayed, so they go now that what held them back is over:
 * chunks an import added or a worker put back while the batch's file was still read (they rest in
 * batchGate's wait), and those of a held batch a person released or cancelled (they rest until near its
 * next probe, up to 15 s). It reads the batch's own put-back jobs (src/batches/putBackChunks.ts), never
 * BullMQ's whole delayed set: a wake costs that batch's jobs, however many other batches' jobs rest delayed.
 * Each is promoted by BullMQ's own promote script, all sent at once (no job fetched first: a few hundred
 * chunks wake in one round trip's time). A job not delayed any more is left alone: one taken meanwhile stays
 * noted (its worker drops it once it completes; one about to rest again is found by a later wake), one gone
 * (completed, removed) is dropped. Returns how many were promoted.
 */
export async function wakeBatchJobs(queue: Queue, putBack: PutBackChunks, batchId: string): Promise<number> {
  // In the batch's order (`<batchId>.<n>`; a set has none): BullMQ takes promoted jobs first in, first out.
  const ids = (await putBack.read(batchId)).sort((a, b) => chunkNumber(a) - chunkNumber(b));
  const promoted = await Promise.all(
    ids.map((id) =>
      queue.backend.promote(id).then(
        () => true,
        () => false,
      ),
    ),
  );
  const notDelayed = ids.filter((_, i) => promoted[i] !== true);
  const gone = await putBack.gone(queue.name, notDelayed);
  await putBack.drop(batchId, [...ids.filter((_, i) => promoted[i] === true), ...gone]);
  return ids.length - notDelayed.length;
}

/** n of a chunk job id `<batchId>.<n>`. */
function chunkNumber(id: string): number {
  return Number(id.slice(id.lastIndexOf('.') + 1));
}
