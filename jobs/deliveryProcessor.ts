import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { bullmq } from '../src/cjsPackages.js';
import type { Logger } from '../src/logger.js';
import type { PayloadCodec } from '../src/deliveryJob.js';
import { JobDataError } from '../src/errors.js';
import { readJob, type QueuedJobData, type ReadJob } from '../src/ledger/jobData.js';
import { deliverChunk } from '../src/worker/deliverChunk.js';
import { putBackJob, wakeIfFree, type BatchWait, type PutBackNotes } from '../src/batches/putBackChunks.js';
import type { DeliverDeps, DeliveryResult } from '../src/worker/deliveryDeps.js';

/** How long a job this process cannot read waits before it is offered again (to a newer worker, after a deploy). */
export const UNREADABLE_JOB_POSTPONE_MS = 60_000;

export interface DeliveryProcessorDeps<P> extends Omit<DeliverDeps<P>, 'postpone' | 'logger'> {
  logger: Logger;
  /** The kind's payload codec (RecordKind.payloadCodec): a chunk's records may be packed. */
  codec?: PayloadCodec<P>;
  /** Each batch's put-back jobs (src/batches/putBackChunks.ts), which waking the batch promotes; none: not noted. */
  putBack?: PutBackNotes;
}

/**
 * BullMQ processor for delivery jobs of every record kind (`deliver-orders`, `register-accounts`;
 * src/queues.ts): a thin adapter that reads the job's data (src/ledger/jobData.ts: a job of one
 * record an earlier release queued reads as a chunk of one), binds a child logger and the job's own
 * lock token, then hands over to src/worker/deliverChunk.ts.
 */
export function createDeliveryProcessor<P>(deps: DeliveryProcessorDeps<P>) {
  return async (job: Job<QueuedJobData<P>, DeliveryResult>, lockToken?: string): Promise<DeliveryResult> => {
    const jobId = job.id ?? '';
    const postpone = async (ms: number, { batchWait }: { batchWait?: BatchWait | undefined } = {}): Promise<void> => {
      await putBackJob(job, Date.now() + ms, lockToken, deps.putBack);
      if (batchWait !== undefined) await wakeIfFree(job, deps.putBack, batchWait);
    };
    let read: ReadJob<P>;
    try {
      read = readJob(job.data, jobId, deps.codec);
    } catch (error) {
      if (!(error instanceof JobDataError)) throw error;
      // Never guessed at: the job waits, attempts unspent, for a bulkorder that reads it (README "Deployment").
      deps.logger.error(
        { jobId, batchId: job.data.batchId, code: error.code, details: error.details },
        `${error.message}; the job stays queued`,
      );
      await postpone(UNREADABLE_JOB_POSTPONE_MS);
      throw new (bullmq().DelayedError)();
    }
    const { chunk, chunkId } = read;
    // A job of an import names no file: it is its batch's (read once per batch and process: deps.batchFile).
    const file = chunk.file ?? (await deps.batchFile(chunk.batchId));
    const attempt = {
      token: randomUUID(),
      attempt: job.attemptsMade + 1,
      maxAttempts: job.opts.attempts ?? 1,
      queuedAt: job.timestamp,
      chunkId,
    };
    const logger = deps.logger.child({ batchId: chunk.batchId, jobId: job.id, file });
    const result = await deliverChunk(chunk, attempt, { ...deps, logger, postpone });
    // Run before (put back, most likely): it leaves its batch's put-back jobs. Not worth failing a completed job for.
    if (job.attemptsStarted > 1) await deps.putBack?.drop(chunk.batchId, [jobId]).catch(() => undefined);
    return result;
  };
}
