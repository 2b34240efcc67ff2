import type { Queue } from 'bullmq';
import type { PutBackChunks } from './putBackChunks.js';

/**
 * Promotes the jobs of one batch that rest delayed, so they go now that what held them back is over:
 * chunks a worker took while the batch's file was still read (they rest in batchGate's wait), and
 * those of a held batch a person released or cancelled (they rest until near its next probe, up to
 * 15 s). It reads the batch's own put-back jobs (src/batches/putBackChunks.ts), never BullMQ's whole
 * delayed set: a wake costs that batch's jobs, however many other batches' jobs rest delayed. A job
 * taken meanwhile is left alone (and left noted: its worker drops it once it completes). Returns how
 * many were promoted.
 */
export async function wakeBatchJobs(queue: Queue, putBack: PutBackChunks, batchId: string): Promise<number> {
  const done: string[] = [];
  let woken = 0;
  for (const id of await putBack.read(batchId)) {
    const job = await queue.getJob(id);
    // Completed (removed) or ended for good: nothing left to wake.
    if (job === undefined) {
      done.push(id);
      continue;
    }
    // Taken or promoted by another meanwhile: not delayed any more, nothing to do.
    const promoted = await job.promote().then(
      () => true,
      () => false,
    );
    if (promoted) {
      woken++;
      done.push(id);
    }
  }
  await putBack.drop(batchId, done);
  return woken;
}
