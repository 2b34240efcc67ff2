import { DelayedError, RateLimitError, UnrecoverableError } from 'bullmq';
import { reasonWithDetails } from '../deadLetter/errorDetails.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import { parkedRecord, type DeliveryJobData, type ParkFacts } from '../deliveryJob.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { RemoteId } from '../delivery/remoteId.js';
import type { CircuitBreaker } from './circuitBreaker.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';

/** Words for one record kind in the reasons a person reads (dead letters, held records, logs). */
export interface RecordWording {
  /** `order` or `account`. */
  noun: string;
  /**
   * The reason for a refusal this kind explains better than the generic "the API refused the
   * order" (accounts: 409 means the account exists); undefined for the generic text.
   */
  refusal?(outcome: { status: number; code: string; message: string }): string | undefined;
  /** What a person does with a record held because an earlier attempt may have sent it. */
  heldHint: string;
}

/** Orders: the default wording. */
export const ORDER_WORDING: RecordWording = {
  noun: 'order',
  heldHint: 'Check for the order on the service, then `bulkorder review release` or `review resolve --delivered`.',
};

/** Effects a delivery attempt needs; injected so the logic is testable with the real parts. */
export interface DeliverDeps<P = unknown> {
  /**
   * The one API call that creates the record (POST /orders, POST /accounts), classified; never
   * throws for HTTP failures. `key` is the record's stable key (the Idempotency-Key header).
   */
  send(payload: P, record: { key: string }): Promise<ApiOutcome>;
  /** Default ORDER_WORDING. */
  wording?: RecordWording;
  ledger: Ledger;
  breaker: CircuitBreaker;
  /** The file of a batch (its record keeps it), for a job that names none: its log lines and parked record. */
  batchFile(batchId: string): Promise<string>;
  logger: Logger;
  /** Pauses the whole queue, across all workers, for `ms` (BullMQ's rate limiter). */
  rateLimit(ms: number): Promise<void>;
  /** Moves this job to delayed without spending an attempt (a failure that is not the order's). */
  postpone(ms: number): Promise<void>;
}

export interface AttemptInfo {
  /** Unique per attempt; the ledger's claim token. */
  token: string;
  /** 1-based number of this attempt. */
  attempt: number;
  maxAttempts: number;
}

/** How an attempt ended, when it ended the job. */
export type DeliveryResult =
  | { outcome: 'delivered'; remoteId?: RemoteId; status: number }
  | { outcome: 'already-delivered'; remoteId: RemoteId }
  | { outcome: 'held'; reason: string }
  | { outcome: 'superseded' }
  /** A chunk job (src/worker/deliverChunk.ts): how many of its records ended how in its last attempt. */
  | { outcome: 'chunk'; counts: Partial<Record<OrderOutcome, number>> };

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
 * not the order's fault. Short, so the breaker sees the repeats and opens (credentialsMinAttempts).
 */
export const CREDENTIALS_POSTPONE_MS = 5_000;

/**
 * One delivery attempt of one record (an order, an employee account): claim it in the ledger,
 * post it, and record the outcome. Returns when the job is done; throws BullMQ's errors to
 * retry (backoff), postpone, rate-limit or fail it. Never posts a record the ledger knows as
 * delivered, held, or possibly sent.
 */
export async function deliverOrder<P>(job: DeliveryJobData<P>, attempt: AttemptInfo, deps: DeliverDeps<P>): Promise<DeliveryResult> {
  const { ledger, logger } = deps;
  const noun = (deps.wording ?? ORDER_WORDING).noun;
  // The breaker is asked inside the claim's script, and only while this worker sees it open or
  // half-open. Open (or half-open with its trials taken), it keeps the job for later, attempt unspent.
  const claim = await ledger.claim(job.key, attempt.token, deps.breaker.gate());
  const admission = deps.breaker.admission(claim);
  if (!admission.go) {
    await deps.postpone(admission.waitMs + Math.round(Math.random() * 1000));
    throw new DelayedError();
  }
  if (claim.outcome === 'delivered') {
    logger.info({ remoteId: claim.remoteId }, 'already delivered: not sent again');
    return { outcome: 'already-delivered', remoteId: claim.remoteId };
  }
  if (claim.outcome === 'held') return { outcome: 'held', reason: 'already held for review' };
  if (claim.outcome === 'stale') {
    const reason =
      `An earlier attempt was sending this ${noun} when its worker stopped (crash, kill or lost lock): it may or may not ` +
      `have reached the API. ${(deps.wording ?? ORDER_WORDING).heldHint}`;
    await park(job, attempt, deps, claim.staleToken, 'held', { reason, code: 'OUTCOME_UNKNOWN' });
    logger.warn({ outcome: 'held', code: 'OUTCOME_UNKNOWN' }, 'held for review: a previous attempt may have sent it');
    return { outcome: 'held', reason };
  }

  const started = performance.now();
  const outcome = await deps.send(job.payload, { key: job.key });
  const durationMs = Math.round(performance.now() - started);
  // Bound per line rather than with logger.child(): a child per attempt costs ~4% of a worker's CPU.
  const facts = { attempt: attempt.attempt, durationMs, ...(admission.trial ? { trial: true } : {}) };
  // Recorded before the outcome's own effects: a refusal that opens the breaker pauses the queue at once.
  await deps.breaker.record(outcome, job.key);

  switch (outcome.kind) {
    case 'delivered': {
      await ledger.settle({ orderKey: job.key, batchId: job.batchId, token: attempt.token, state: 'delivered', remoteId: outcome.remoteId ?? '', httpStatus: outcome.status });
      logger.info({ ...facts, status: outcome.status, remoteId: outcome.remoteId }, 'delivered');
      return { outcome: 'delivered', status: outcome.status, ...(outcome.remoteId === undefined ? {} : { remoteId: outcome.remoteId }) };
    }
    case 'ambiguous': {
      if (ledger.ambiguousPolicy === 'resend') {
        await release(job, attempt, deps, answeredAfterSending(outcome.status));
        logger.warn({ ...facts, code: outcome.code }, 'no answer; sending again (policy: at-least-once)');
        throw new RetryableDeliveryError(outcome.code, outcome.message);
      }
      const reason = `Sent, but no answer came (${outcome.code}: ${outcome.message}). The ${noun} may or may not exist on the service.`;
      await park(job, attempt, deps, attempt.token, 'held', { reason, code: outcome.code, message: outcome.message, ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }) });
      logger.warn({ ...facts, outcome: 'held', code: outcome.code }, 'held for review: sent without an answer');
      return { outcome: 'held', reason };
    }
    case 'rateLimited': {
      await release(job, attempt, deps);
      logger.warn({ ...facts, status: 429, retryAfterMs: outcome.retryAfterMs }, 'rate limited: pausing the queue');
      await deps.rateLimit(outcome.retryAfterMs);
      throw new RateLimitError();
    }
    case 'retry': {
      if (attempt.attempt >= attempt.maxAttempts) {
        const reason = `Gave up after ${attempt.attempt} attempts; the last failure was ${outcome.code}: ${outcome.message}.`;
        await park(job, attempt, deps, attempt.token, 'dead', { reason, code: outcome.code, message: outcome.message, body: outcome.body, ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }) }, answeredAfterSending(outcome.status));
        logger.warn({ ...facts, status: outcome.status, code: outcome.code, body: outcome.body }, 'dead-lettered: retries exhausted');
        throw new UnrecoverableError(reason);
      }
      await release(job, attempt, deps, answeredAfterSending(outcome.status));
      if (deps.breaker.holdsBack()) {
        // The breaker is open: the outage is the API's, so the order keeps its attempts for later.
        logger.warn({ ...facts, status: outcome.status, code: outcome.code }, 'temporary failure while the circuit breaker is open: waits without spending an attempt');
        await deps.postpone(1000 + Math.round(Math.random() * 1000));
        throw new DelayedError();
      }
      logger.warn({ ...facts, status: outcome.status, code: outcome.code, retryAfterMs: outcome.retryAfterMs }, 'temporary failure: will retry');
      throw new RetryableDeliveryError(outcome.code, outcome.message, outcome.retryAfterMs);
    }
    case 'unauthorized': {
      // Not about the order: it waits, attempt unspent; the breaker opens when 401s repeat.
      await release(job, attempt, deps);
      logger.error({ ...facts, status: outcome.status, code: outcome.code, body: outcome.body }, 'our credentials were refused even with a fresh token: not dead-lettered');
      await deps.postpone(CREDENTIALS_POSTPONE_MS);
      throw new DelayedError();
    }
    case 'permanent': {
      // A refusal is about the order unless the breaker's evidence says otherwise; if it opens,
      // the orders its burst dead-lettered go back to the queue when it closes.
      const reason = deps.wording?.refusal?.(outcome) ?? `The API refused the ${noun}: HTTP ${outcome.status} ${outcome.code}: ${outcome.message}`;
      // The API's details (which field, which product) travel into the ledger, so the results file shows them.
      await park(job, attempt, deps, attempt.token, 'dead', { reason, httpStatus: outcome.status, code: outcome.code, message: reasonWithDetails(outcome.message, outcome.body), body: outcome.body, bodyTruncated: outcome.bodyTruncated });
      logger.warn({ ...facts, status: outcome.status, code: outcome.code, body: outcome.body }, 'dead-lettered: refused by the API');
      throw new UnrecoverableError(reason);
    }
  }
}

/** `answered5xx`: the server answered 5xx to this attempt, so it may have stored the record before failing. */
async function release<P>(job: DeliveryJobData<P>, attempt: AttemptInfo, deps: DeliverDeps<P>, answered5xx = false): Promise<void> {
  await deps.ledger.settle({ orderKey: job.key, batchId: job.batchId, token: attempt.token, state: 'queued', ...(answered5xx ? { answered5xx } : {}) });
}

/**
 * A 5xx status line proves the request reached the server ("stored, then 500" looks the same as
 * "failed, then 500"); a retry without a status never left (connect refused, token endpoint down).
 */
export function answeredAfterSending(status: number | undefined): boolean {
  return status !== undefined && status >= 500;
}

async function park<P>(
  job: DeliveryJobData<P>,
  attempt: AttemptInfo,
  deps: DeliverDeps<P>,
  token: string,
  kind: 'dead' | 'held',
  facts: ParkFacts,
  answered5xx = false,
): Promise<void> {
  const record = parkedRecord(job, job.file ?? (await deps.batchFile(job.batchId)), kind, facts, attempt.attempt);
  const settled = await deps.ledger.settle({
    orderKey: job.key,
    batchId: job.batchId,
    token,
    state: kind,
    parkedRecord: record,
    ...(facts.httpStatus === undefined ? {} : { httpStatus: facts.httpStatus }),
    ...(facts.code === undefined ? {} : { code: facts.code }),
    ...(facts.message === undefined ? {} : { message: facts.message }),
    ...(answered5xx ? { answered5xx } : {}),
  });
  if (settled === 'lost') deps.logger.warn({ kind }, `another attempt owns this ${deps.wording?.noun ?? 'order'} now; left its state alone`);
}
