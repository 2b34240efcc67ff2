import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import type { Logger } from '../src/logger.js';
import type { DeliveryJobData } from '../src/deliveryJob.js';
import { deliverOrder, type DeliverDeps, type DeliveryResult } from '../src/worker/deliverOrder.js';

export interface DeliveryProcessorDeps<P> extends Omit<DeliverDeps<P>, 'postpone' | 'logger'> {
  logger: Logger;
}

/**
 * BullMQ processor for delivery jobs of every record kind (`deliver-order`, `register-account`;
 * src/queues.ts): a thin
 * adapter that binds a child logger and the job's own lock token, then hands over to
 * src/worker/deliverOrder.ts.
 */
export function createDeliveryProcessor<P>(deps: DeliveryProcessorDeps<P>) {
  return async (job: Job<DeliveryJobData<P>, DeliveryResult>, lockToken?: string): Promise<DeliveryResult> => {
    const data = job.data;
    // orderKey names the record's key for every kind, so one log query finds any record.
    // A job of an import names no file: it is its batch's (read once per batch and process: deps.batchFile).
    const file = data.file ?? (await deps.batchFile(data.batchId));
    const logger = deps.logger.child({ batchId: data.batchId, orderKey: data.key, file, lines: data.lines });
    return deliverOrder(
      data,
      {
        token: `${randomUUID()}`,
        attempt: job.attemptsMade + 1,
        maxAttempts: job.opts.attempts ?? 1,
      },
      {
        ...deps,
        logger,
        postpone: (ms) => job.moveToDelayed(Date.now() + ms, lockToken),
      },
    );
  };
}
