import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { bullmq } from '../src/cjsPackages.js';
import type { Logger } from '../src/logger.js';
import { isChunk, type AnyDeliveryJobData, type PayloadCodec } from '../src/deliveryJob.js';
import { JobDataError } from '../src/errors.js';
import { checkJobVersion, readChunk } from '../src/ledger/jobData.js';
import { deliverRecord, type DeliveryResult } from '../src/worker/deliverRecord.js';
import { deliverChunk, type ChunkDeps } from '../src/worker/deliverChunk.js';

/** How long a job this process cannot read waits before it is offered again (to a newer worker, after a deploy). */
export const UNREADABLE_JOB_POSTPONE_MS = 60_000;

export interface DeliveryProcessorDeps<P> extends Omit<ChunkDeps<P>, 'postpone' | 'logger'> {
  logger: Logger;
  /** The kind's payload codec (RecordKind.payloadCodec): a chunk's records may be packed. */
  codec?: PayloadCodec<P>;
}

/**
 * BullMQ processor for delivery jobs of every record kind (`deliver-order`, `register-account`,
 * and their chunk jobs `deliver-orders`, `register-accounts`; src/queues.ts): a thin adapter that
 * reads the job's data (src/ledger/jobData.ts), binds a child logger and the job's own lock token,
 * then hands over to src/worker/deliverRecord.ts (one record, in one request slot) or
 * src/worker/deliverChunk.ts (several).
 */
export function createDeliveryProcessor<P>(deps: DeliveryProcessorDeps<P>) {
  return async (job: Job<AnyDeliveryJobData<P>, DeliveryResult>, lockToken?: string): Promise<DeliveryResult> => {
    const data = job.data;
    const jobId = job.id ?? '';
    const postpone = (ms: number) => job.moveToDelayed(Date.now() + ms, lockToken);
    let read;
    try {
      read = isChunk(data) ? readChunk(data, jobId, deps.codec) : (checkJobVersion(data, jobId), data);
    } catch (error) {
      if (!(error instanceof JobDataError)) throw error;
      // Never guessed at: the job waits, attempts unspent, for a bulkorder that reads it (README "Deployment").
      deps.logger.error(
        { jobId, batchId: data.batchId, code: error.code, details: error.details },
        `${error.message}; the job stays queued`,
      );
      await postpone(UNREADABLE_JOB_POSTPONE_MS);
      throw new bullmq.DelayedError();
    }
    // A job of an import names no file: it is its batch's (read once per batch and process: deps.batchFile).
    const file = read.file ?? (await deps.batchFile(read.batchId));
    const attempt = {
      token: randomUUID(),
      attempt: job.attemptsMade + 1,
      maxAttempts: job.opts.attempts ?? 1,
      queuedAt: job.timestamp,
    };
    if ('records' in read) {
      const logger = deps.logger.child({ batchId: read.batchId, jobId: job.id, file });
      return deliverChunk(read, { ...attempt, jobId }, { ...deps, logger, postpone });
    }
    // orderKey names the record's key for every kind, so one log query finds any record.
    const logger = deps.logger.child({ batchId: read.batchId, orderKey: read.key, file, lines: read.lines });
    await deps.slots.acquire(1);
    try {
      return await deliverRecord(read, attempt, { ...deps, logger, postpone });
    } finally {
      deps.slots.release(1);
    }
  };
}
