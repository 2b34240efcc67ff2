import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import type { Logger } from '../src/logger.js';
import { isChunk, type AnyDeliveryJobData } from '../src/deliveryJob.js';
import { deliverRecord, type DeliveryResult } from '../src/worker/deliverRecord.js';
import { deliverChunk, type ChunkDeps } from '../src/worker/deliverChunk.js';

export interface DeliveryProcessorDeps<P> extends Omit<ChunkDeps<P>, 'postpone' | 'logger'> {
  logger: Logger;
}

/**
 * BullMQ processor for delivery jobs of every record kind (`deliver-order`, `register-account`,
 * and their chunk jobs `deliver-orders`, `register-accounts`; src/queues.ts): a thin adapter that
 * binds a child logger and the job's own lock token, then hands over to src/worker/deliverRecord.ts
 * (one record, in one request slot) or src/worker/deliverChunk.ts (several).
 */
export function createDeliveryProcessor<P>(deps: DeliveryProcessorDeps<P>) {
  return async (job: Job<AnyDeliveryJobData<P>, DeliveryResult>, lockToken?: string): Promise<DeliveryResult> => {
    const data = job.data;
    // A job of an import names no file: it is its batch's (read once per batch and process: deps.batchFile).
    const file = data.file ?? (await deps.batchFile(data.batchId));
    const attempt = { token: randomUUID(), attempt: job.attemptsMade + 1, maxAttempts: job.opts.attempts ?? 1 };
    const postpone = (ms: number) => job.moveToDelayed(Date.now() + ms, lockToken);
    if (isChunk(data)) {
      const logger = deps.logger.child({ batchId: data.batchId, jobId: job.id, file });
      return deliverChunk(data, { ...attempt, jobId: job.id ?? '' }, { ...deps, logger, postpone });
    }
    // orderKey names the record's key for every kind, so one log query finds any record.
    const logger = deps.logger.child({ batchId: data.batchId, orderKey: data.key, file, lines: data.lines });
    await deps.slots.acquire(1);
    try {
      return await deliverRecord(data, attempt, { ...deps, logger, postpone });
    } finally {
      deps.slots.release(1);
    }
  };
}
