import type { JobsOptions } from 'bullmq';
import type { DeliverySettings } from './deliverySettings.js';

/**
 * Every BullMQ queue and job name bulkorder uses, and the options of its jobs, in one place.
 * Each record kind (src/kinds/) names its queue and job from here; its key prefix keeps the
 * queues of two kinds apart even where names would match.
 */

/** Queue of orders to deliver (Business API). */
export const ORDERS_QUEUE = 'orders';
/** Job name of one order delivery. */
export const DELIVER_ORDER = 'deliver-order';
/** Job name of the delivery of several orders of one batch (BULKORDER_ORDERS_PER_JOB). */
export const DELIVER_ORDERS = 'deliver-orders';

/** Queue of employee accounts to register (Cafetariaplan API), in the accounts keyspace. */
export const ACCOUNTS_QUEUE = 'accounts';
/** Job name of one account registration. */
export const REGISTER_ACCOUNT = 'register-account';
/** Job name of the registration of several accounts of one batch. */
export const REGISTER_ACCOUNTS = 'register-accounts';

/** Queue of scheduled imports: its own, so a long import never waits behind (or delays) deliveries. */
export const SCHEDULES_QUEUE = 'schedules';
/** Job name of every job a schedule produces. */
export const SCHEDULED_IMPORT = 'scheduled-import';

/** Name of BullMQ's custom backoff type that src/worker/backoff.ts implements. */
export const BACKOFF_TYPE = 'bulkorder';

/**
 * The job id of chunk `n` of a batch's import. BullMQ refuses an id with `:`; the batch id's `b-`
 * keeps it apart from every record key (`ref.`, `refh.`, `sha.`, `acct.`), the id of a job of one record.
 */
export function chunkJobId(batchId: string, n: number): string {
  return `${batchId}.${n}`;
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
