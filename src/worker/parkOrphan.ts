import type { Job } from 'bullmq';
import { parkedRecord, recordOfChunk, type DeliveryRecord, type PayloadCodec } from '../deliveryJob.js';
import { JobDataError } from '../errors.js';
import { readJob, type QueuedJobData } from '../ledger/jobData.js';
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

/** What parkOrphan parks with: the ledger, the log, the kind's words and how its jobs read. */
export interface OrphanDeps<P> {
  ledger: Ledger;
  logger: Logger;
  /** The record kind's noun in messages (`order`, `account`). */
  noun: string;
  /** The file of a batch, for a record whose job names none. */
  batchFile: (batchId: string) => Promise<string>;
  /** The kind's packed-payload codec, when its jobs carry packed payloads. */
  codec?: PayloadCodec<P> | undefined;
}

/**
 * Parks each record of a job that failed for good (stalled too often, retries spent, an unexpected
 * error on its last attempt) still queued in it or being sent by it: the processor settles every
 * record it answered for, so what is left has no state a person can see without this. Returns how
 * each record it parked ended (metrics), none when the job is not over.
 */
export async function parkOrphan<P>(
  job: Job<QueuedJobData<P>>,
  error: Error,
  deps: OrphanDeps<P>,
): Promise<('dead' | 'held')[]> {
  const { logger, codec } = deps;
  const final = stalledOut(job) || error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
  if (!final) return [];
  let read;
  try {
    read = readJob(job.data, job.id ?? '', codec);
  } catch (error) {
    if (!(error instanceof JobDataError)) throw error;
    // A record parked with guessed fields would be resent with them: its entry stays queued for a newer worker's import to take over.
    logger.error({ jobId: job.id, code: error.code, details: error.details }, `${error.message}; nothing parked`);
    return [];
  }
  const { chunk, chunkId } = read;
  const parked: ('dead' | 'held')[] = [];
  for (const record of chunk.records) {
    const kind = await parkRecord(recordOfChunk(chunk, record), { chunkId, job, error }, deps);
    if (kind !== undefined) parked.push(kind);
  }
  return parked;
}

async function parkRecord<P>(
  data: DeliveryRecord<P>,
  failed: { chunkId: string; job: Job; error: Error },
  deps: OrphanDeps<P>,
): Promise<'dead' | 'held' | undefined> {
  const { chunkId, job, error } = failed;
  const { ledger, logger, noun, batchFile } = deps;
  try {
    const entry = await ledger.get(data.key);
    if (entry === undefined || (entry.state !== 'sending' && entry.state !== 'queued')) return undefined;
    // Queued in another job since (a dead letter sent again): not this job's to park.
    if ((entry.chunkId ?? '') !== chunkId) return undefined;
    const token = await ledger.currentToken(data.key);
    const kind: 'dead' | 'held' = entry.state === 'sending' ? 'held' : 'dead';
    const cause = stalledOut(job)
      ? `the workers holding it died more often than BULKORDER_MAX_STALLS allows (${error.message})`
      : error.message;
    const reason =
      kind === 'held'
        ? `The job failed while the ${noun} was being sent (${cause}); it may or may not have reached the API.`
        : `The job failed before the ${noun} could be delivered: ${cause}`;
    const code = kind === 'held' ? 'OUTCOME_UNKNOWN' : 'JOB_FAILED';
    const record = parkedRecord(data, data.file ?? (await batchFile(data.batchId)), {
      kind,
      facts: { reason, code, message: error.message },
      attempts: job.attemptsMade,
    });
    // A queued entry has no claim token; claim it first so the park is atomic.
    const parkToken = token ?? `orphan-${job.id}`;
    if (entry.state === 'queued') await ledger.claimMany([data.key], parkToken, chunkId);
    const [settled] = await ledger.settleMany([
      {
        orderKey: data.key,
        batchId: data.batchId,
        token: parkToken,
        state: kind,
        parkedRecord: record,
        code,
        message: error.message,
      },
    ]);
    if (settled !== 'ok') return undefined;
    logger.warn(
      { batchId: data.batchId, orderKey: data.key, kind, err: error },
      'job failed outside the delivery logic; parked',
    );
    return kind;
  } catch (parkError) {
    logger.error(
      { batchId: data.batchId, orderKey: data.key, err: parkError },
      'could not park a failed job; the import will find it queued without a job and take it over',
    );
    return undefined;
  }
}
