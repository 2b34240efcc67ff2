import type { Job } from 'bullmq';
import {
  isChunk,
  parkedRecord,
  recordOfChunk,
  type AnyDeliveryJobData,
  type DeliveryJobData,
  type PayloadCodec,
} from '../deliveryJob.js';
import { JobDataError } from '../errors.js';
import { readChunk } from '../ledger/jobData.js';
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

/**
 * Parks a job that failed for good without our processor having parked it: its record, or each
 * record of a chunk job still queued in it or being sent by it.
 */
export async function parkOrphan<P>(
  job: Job<AnyDeliveryJobData<P>>,
  error: Error,
  ledger: Ledger,
  logger: Logger,
  noun: string,
  batchFile: (batchId: string) => Promise<string>,
  codec?: PayloadCodec<P>,
): Promise<void> {
  const stalled = stalledOut(job);
  if (error.name === 'UnrecoverableError' && !stalled) return; // the processor parked it before throwing
  const finalAttempt = stalled || job.attemptsMade >= (job.opts.attempts ?? 1);
  if (!finalAttempt) return;
  const data = job.data;
  let records: DeliveryJobData<P>[];
  try {
    records = isChunk(data)
      ? readChunk(data, job.id ?? '', codec).records.map((record) => recordOfChunk(data, record))
      : [data];
  } catch (error) {
    if (!(error instanceof JobDataError)) throw error;
    // A record parked with guessed fields would be resent with them: its entry stays queued for a newer worker's import to take over.
    logger.error({ jobId: job.id, code: error.code, details: error.details }, `${error.message}; nothing parked`);
    return;
  }
  const chunkId = isChunk(data) ? (job.id ?? '') : '';
  for (const record of records) await parkRecord(record, chunkId, job, error, ledger, logger, noun, batchFile);
}

async function parkRecord<P>(
  data: DeliveryJobData<P>,
  chunkId: string,
  job: Job,
  error: Error,
  ledger: Ledger,
  logger: Logger,
  noun: string,
  batchFile: (batchId: string) => Promise<string>,
): Promise<void> {
  try {
    const entry = await ledger.get(data.key);
    if (entry === undefined || (entry.state !== 'sending' && entry.state !== 'queued')) return;
    // Queued in another job since (a dead letter sent again): not this job's to park.
    if ((entry.chunkId ?? '') !== chunkId) return;
    const token = await ledger.currentToken(data.key);
    const kind: 'dead' | 'held' = entry.state === 'sending' ? 'held' : 'dead';
    const reason =
      kind === 'held'
        ? `The job failed while the ${noun} was being sent (${error.message}); it may or may not have reached the API.`
        : `The job failed before the ${noun} could be delivered: ${error.message}`;
    const record = parkedRecord(
      data,
      data.file ?? (await batchFile(data.batchId)),
      kind,
      { reason, code: kind === 'held' ? 'OUTCOME_UNKNOWN' : 'JOB_FAILED', message: error.message },
      job.attemptsMade,
    );
    // A queued entry has no claim token; claim it first so the park is atomic.
    const parkToken = token ?? `orphan-${job.id}`;
    if (entry.state === 'queued') await ledger.claim(data.key, parkToken, undefined, chunkId);
    await ledger.settle({
      orderKey: data.key,
      batchId: data.batchId,
      token: parkToken,
      state: kind,
      parkedRecord: record,
      code: record.code!,
      message: error.message,
    });
    logger.warn(
      { batchId: data.batchId, orderKey: data.key, kind, err: error },
      'job failed outside the delivery logic; parked',
    );
  } catch (parkError) {
    logger.error(
      { batchId: data.batchId, orderKey: data.key, err: parkError },
      'could not park a failed job; the import will find it queued without a job and take it over',
    );
  }
}
