import { randomBytes } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import type { DeliverySettings } from './deliverySettings.js';

/**
 * Every BullMQ queue and job name bulkorder uses, and the options of its jobs, in one place.
 * Each record kind (src/kinds/) names its queue and job from here; its key prefix keeps the
 * queues of two kinds apart even where names would match.
 */

/** Queue of orders to deliver (Business API). */
export const ORDERS_QUEUE = 'orders';
/**
 * Job name of the delivery of orders of one batch (BULKORDER_ORDERS_PER_JOB of an import's, one of a
 * requeue's). Earlier releases also queued `deliver-order`, a job of one order: read as a chunk of one.
 */
export const DELIVER_ORDERS = 'deliver-orders';

/** Queue of employee accounts to register (Cafetariaplan API), in the accounts keyspace. */
export const ACCOUNTS_QUEUE = 'accounts';
/** Job name of the registration of accounts of one batch (earlier releases: also `register-account`, one account). */
export const REGISTER_ACCOUNTS = 'register-accounts';

/** Queue of scheduled imports: its own, so a long import never waits behind (or delays) deliveries. */
export const SCHEDULES_QUEUE = 'schedules';
/** Job name of every job a schedule produces. */
export const SCHEDULED_IMPORT = 'scheduled-import';

/** Name of BullMQ's custom backoff type that src/worker/backoff.ts implements. */
export const BACKOFF_TYPE = 'bulkorder';

/**
 * The job id of chunk `n` of a batch's import. BullMQ refuses an id with `:`; the batch id's `b-`
 * keeps it apart from every record key (`ref.`, `refh.`, `sha.`, `acct.`), the id of a job of one
 * record of earlier releases. Each record's ledger entry keeps `n` (`q`) while queued in it.
 */
export function chunkJobId(batchId: string, n: number | string): string {
  return `${batchId}.${n}`;
}

/**
 * The job id of a chunk a requeue adds to `batchId` (dead-letters retry, review release, the
 * breaker's burst): `r` and a random part where an import's chunks are numbered, since the burst
 * goes back into the batch its import numbered already, and an id BullMQ still holds would be ignored.
 */
export function requeueChunkId(batchId: string): string {
  return chunkJobId(batchId, `r${randomBytes(6).toString('hex')}`);
}

/**
 * Options of every delivery job. Jobs are removed when they end: the ledger, the batch
 * record and the dead-letter and review stores keep what matters, and a removed job frees
 * its id (the record's key) for a re-import of a fixed row.
 */
export function deliveryJobOptions(delivery: DeliverySettings): JobsOptions {
  return {
    attempts: delivery.attempts,
    backoff: { type: BACKOFF_TYPE },
    removeOnComplete: true,
    removeOnFail: true,
  };
}
