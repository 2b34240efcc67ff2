import type { Ledger } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { CircuitBreaker } from './circuitBreaker.js';
import type { BatchCanary } from './batchCanary.js';
import type { RateGrant, RequestPacer } from './sharedRate.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';
import type { RecordWording } from '../kinds/recordWording.js';
import type { RecordRetry } from './untilRecorded.js';
import type { RequestSlots } from './requestSlots.js';
import { isRedisConnectionError } from '../redisErrors.js';
import type { BatchWait } from '../batches/putBackChunks.js';

/** Effects a delivery attempt needs; injected so the logic is testable with the real parts. */
export interface DeliverDeps<P = unknown> {
  /**
   * The one API call that creates the record (POST /orders, POST /accounts), classified; never
   * throws for HTTP failures. `key` is the record's stable key (the Idempotency-Key header).
   */
  send(payload: P, record: { key: string; batchId?: string }): Promise<ApiOutcome>;
  /** Whom a record is for (RecordKind.customerOf): the breaker weighs refusals by customers. */
  customerOf?(payload: P): string;
  /** Default ORDER_WORDING. */
  wording?: RecordWording;
  ledger: Ledger;
  breaker: CircuitBreaker;
  /** Each batch's own circuit (its canary); none: every batch goes as if its canary had passed. */
  canary?: BatchCanary;
  /** The file of a batch (its record keeps it), for a job that names none: its log lines and parked records. */
  batchFile(batchId: string): Promise<string>;
  logger: Logger;
  /** The request rate all workers share (src/worker/sharedRate.ts); none: requests go at once. */
  rate?: RequestPacer;
  /**
   * Moves this job to delayed without spending an attempt (a failure that is not the records').
   * `batchWait`: it waits for its batch (its file's read, or its circuit's verdict); promoted at once
   * if that ended meanwhile.
   */
  postpone(ms: number, options?: { batchWait?: BatchWait | undefined }): Promise<void>;
  /**
   * How an answer's settle outlasts a Redis that refuses writes (OOM) or is away: retried with
   * backoff until Redis takes it or the worker has stopped. None: a refused settle fails the job.
   */
  recordRetry?: RecordRetry;
  /** The process's requests in flight (`--concurrency`), shared by all its jobs. */
  slots: RequestSlots;
  /** Told how each record of the job ended, as it ends (metrics). */
  onRecordEnded?(outcome: OrderOutcome): void;
  /** True once the worker is stopping: a job sends no further wave. */
  isClosing?(): boolean;
}

/** One attempt of a delivery job. */
export interface AttemptInfo {
  /** Unique per attempt; the ledger's claim token. */
  token: string;
  /** 1-based number of this attempt (the job's: each record's attempts are its chunk's). */
  attempt: number;
  maxAttempts: number;
  /** When the job was queued (ms): an order of a customer proved refused, queued before that, is not sent. */
  queuedAt?: number;
  /** The id its records' ledger entries name the job by (src/ledger/jobData.ts ReadJob.chunkId). */
  chunkId: string;
}

/** How many records of the job ended how in an attempt (the job's result when it completes). */
export type ChunkCounts = Partial<Record<OrderOutcome, number>>;

/** How an attempt ended, when it ended the job: how many of its records ended how in it. */
export interface DeliveryResult {
  counts: ChunkCounts;
}

/** A failure worth another attempt; carries the API's Retry-After for the backoff strategy. */
export class RetryableDeliveryError extends Error {
  readonly code: string;
  readonly retryAfterMs: number | undefined;
  constructor(code: string, message: string, retryAfterMs?: number) {
    super(`${code}: ${message}`);
    this.name = 'RetryableDeliveryError';
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * How long a job waits, without spending an attempt, after a 401 that survived a fresh token:
 * not the records' fault. Short, so the breaker sees the repeats and opens (credentialsMinAttempts).
 */
export const CREDENTIALS_POSTPONE_MS = 5_000;

/** Tells the shared rate of a 429; a Redis error here must not lose the records' own outcomes. */
export async function slowDown<P>(deps: DeliverDeps<P>, grant: RateGrant, retryAfterMs: number): Promise<void> {
  await deps.rate
    ?.slowDown(grant, retryAfterMs)
    .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not slow the shared rate down'));
}

/**
 * Tells the breaker of an answer. A Redis that refuses the write (OOM, away) costs the breaker one
 * piece of evidence, never the answer itself: the settle that follows waits for Redis instead.
 */
export async function recordEvidence<P>(
  deps: DeliverDeps<P>,
  outcome: ApiOutcome,
  about: { key: string; customer: string | undefined; batch?: string },
): Promise<void> {
  const { key, customer, batch } = about;
  try {
    await deps.breaker.record(outcome, key, customer, batch);
  } catch (error) {
    if (deps.recordRetry === undefined || !isRedisConnectionError(error)) throw error;
    deps.recordRetry.onRefused(error as Error);
  }
}
