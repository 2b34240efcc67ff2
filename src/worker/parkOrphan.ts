import type { Job } from 'bullmq';
import { parkedRecord, type DeliveryJobData } from '../deliveryJob.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';

/**
 * BullMQ's own signal that a job failed because it stalled too often (its worker died mid-job):
 * the job carries a deferred failure, set by BullMQ's stalled-job check, and is failed with an
 * UnrecoverableError that our processor never threw.
 */
function stalledOut(job: Job): boolean {
  return typeof job.deferredFailure === 'string' && job.deferredFailure.length > 0;
}

/** Parks a job that failed for good without our processor having parked it. */
export async function parkOrphan<P>(job: Job<DeliveryJobData<P>>, error: Error, ledger: Ledger, logger: Logger, noun: string, batchFile: (batchId: string) => Promise<string>): Promise<void> {
  const stalled = stalledOut(job);
  if (error.name === 'UnrecoverableError' && !stalled) return; // the processor parked it before throwing
  const finalAttempt = stalled || job.attemptsMade >= (job.opts.attempts ?? 1);
  if (!finalAttempt) return;
  const data = job.data;
  try {
    const entry = await ledger.get(data.key);
    const token = entry === undefined ? undefined : await ledger.currentToken(data.key);
    const kind: 'dead' | 'held' = entry?.state === 'sending' ? 'held' : 'dead';
    if (entry === undefined || (entry.state !== 'sending' && entry.state !== 'queued')) return;
    const reason =
      kind === 'held'
        ? `The job failed while the ${noun} was being sent (${error.message}); it may or may not have reached the API.`
        : `The job failed before the ${noun} could be delivered: ${error.message}`;
    const record = parkedRecord(data, data.file ?? (await batchFile(data.batchId)), kind, { reason, code: kind === 'held' ? 'OUTCOME_UNKNOWN' : 'JOB_FAILED', message: error.message }, job.attemptsMade);
    // A queued entry has no claim token; claim it first so the park is atomic.
    const parkToken = token ?? `orphan-${job.id}`;
    if (entry.state === 'queued') await ledger.claim(data.key, parkToken);
    await ledger.settle({ orderKey: data.key, batchId: data.batchId, token: parkToken, state: kind, parkedRecord: record, code: record.code!, message: error.message });
    logger.warn({ batchId: data.batchId, orderKey: data.key, kind, err: error }, 'job failed outside the delivery logic; parked');
  } catch (parkError) {
    logger.error({ batchId: data.batchId, orderKey: data.key, err: parkError }, 'could not park a failed job; the import will find it queued without a job and take it over');
  }
}
