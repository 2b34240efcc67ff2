import type { OrderPayload } from './ingest/types.js';

/** BullMQ queue of orders to deliver. */
export const ORDERS_QUEUE = 'orders';

/**
 * The data of one delivery job. The job id is the order key, so BullMQ itself refuses a
 * second job for an order that is still queued; the ledger covers the time after.
 */
export interface OrderJobData {
  key: string;
  batchId: string;
  file: string;
  lines: number[];
  orderRef?: string;
  payload: OrderPayload;
  /** The order's original cells, in the batch's column order, so a dead letter can be exported as the input was. */
  cells: string[][];
}

/**
 * What is kept of a dead-lettered or held order until a person resolves or purges it:
 * the order, where it came from, and everything the API said.
 */
export interface ParkedRecord {
  kind: 'dead' | 'held';
  orderKey: string;
  batchId: string;
  file: string;
  lines: number[];
  orderRef?: string;
  payload: OrderPayload;
  cells: string[][];
  /** Why it is parked, in words a person can act on. */
  reason: string;
  httpStatus?: number;
  code?: string;
  message?: string;
  /** The API's error body (JSON when it was JSON), capped. */
  body?: unknown;
  bodyTruncated?: boolean;
  attempts: number;
  parkedAt: number;
}
