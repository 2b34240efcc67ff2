import { DelayedError, RateLimitError, UnrecoverableError } from 'bullmq';
import { reasonWithDetails } from '../delivery/errorDetails.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import { parkedRecord, type DeliveryJobData, type ParkFacts } from '../deliveryJob.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { RemoteId } from '../delivery/remoteId.js';
import type { CircuitBreaker } from './circuitBreaker.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';
import { ORDER_WORDING, type RecordWording } from '../kinds/recordWording.js';

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
  // Queued in a chunk job since (an import of the fixed row): that job sends it, not this one.
  if (claim.outcome === 'moved') {
    logger.info('queued in another job: not sent by this one');
    return { outcome: 'superseded' };
  }
  if (claim.outcome === 'stale') {
    const facts = staleFacts(deps.wording);
    await park(job, attempt, deps, claim.staleToken, 'held', facts);
    logger.warn({ outcome: 'held', code: 'OUTCOME_UNKNOWN' }, 'held for review: a previous attempt may have sent it');
    return { outcome: 'held', reason: facts.reason };
  }

  const started = performance.now();
  const outcome = await deps.send(job.payload, { key: job.key });
  const durationMs = Math.round(performance.now() - started);
  // Bound per line rather than with logger.child(): a child per attempt costs ~4% of a worker's CPU.
  const facts = { attempt: attempt.attempt, durationMs, ...(admission.trial ? { trial: true } : {}) };
  // Recorded before the outcome's own effects: a refusal that opens the breaker pauses the queue at once.
  await deps.breaker.record(outcome, job.key);

  const verdict = verdictOf(outcome, attempt, ledger.ambiguousPolicy, deps.wording);
  switch (verdict.next) {
    case 'delivered': {
      await ledger.settle({ orderKey: job.key, batchId: job.batchId, token: attempt.token, state: 'delivered', remoteId: verdict.remoteId ?? '', httpStatus: verdict.status });
      logger.info({ ...facts, status: verdict.status, remoteId: verdict.remoteId }, 'delivered');
      return { outcome: 'delivered', status: verdict.status, ...(verdict.remoteId === undefined ? {} : { remoteId: verdict.remoteId }) };
    }
    case 'held': {
      await park(job, attempt, deps, attempt.token, 'held', verdict.facts);
      logger.warn({ ...facts, outcome: 'held', code: verdict.facts.code }, verdict.log);
      return { outcome: 'held', reason: verdict.facts.reason };
    }
    case 'dead': {
      // A refusal is about the order unless the breaker's evidence says otherwise; if it opens,
      // the orders its burst dead-lettered go back to the queue when it closes.
      await park(job, attempt, deps, attempt.token, 'dead', verdict.facts, verdict.answered5xx);
      logger.warn({ ...facts, status: verdict.facts.httpStatus, code: verdict.facts.code, body: verdict.facts.body }, verdict.log);
      throw new UnrecoverableError(verdict.facts.reason);
    }
    case 'retry': {
      await release(job, attempt, deps, verdict.answered5xx);
      if (verdict.unanswered) {
        logger.warn({ ...facts, code: verdict.code }, 'no answer; sending again (policy: at-least-once)');
        throw new RetryableDeliveryError(verdict.code, verdict.message);
      }
      if (deps.breaker.holdsBack()) {
        // The breaker is open: the outage is the API's, so the order keeps its attempts for later.
        logger.warn({ ...facts, status: verdict.status, code: verdict.code }, 'temporary failure while the circuit breaker is open: waits without spending an attempt');
        await deps.postpone(1000 + Math.round(Math.random() * 1000));
        throw new DelayedError();
      }
      logger.warn({ ...facts, status: verdict.status, code: verdict.code, retryAfterMs: verdict.retryAfterMs }, 'temporary failure: will retry');
      throw new RetryableDeliveryError(verdict.code, verdict.message, verdict.retryAfterMs);
    }
    case 'rateLimited': {
      await release(job, attempt, deps);
      logger.warn({ ...facts, status: 429, retryAfterMs: verdict.retryAfterMs }, 'rate limited: pausing the queue');
      await deps.rateLimit(verdict.retryAfterMs);
      throw new RateLimitError();
    }
    case 'credentials': {
      // Not about the order: it waits, attempt unspent; the breaker opens when 401s repeat.
      await release(job, attempt, deps);
      logger.error({ ...facts, status: verdict.status, code: verdict.code, body: verdict.body }, 'our credentials were refused even with a fresh token: not dead-lettered');
      await deps.postpone(CREDENTIALS_POSTPONE_MS);
      throw new DelayedError();
    }
  }
}

/**
 * What one attempt's answer means for its record, decided once for a job of one record
 * (deliverOrder) and for each record of a chunk job (src/worker/deliverChunk.ts):
 * - `delivered`: settle as delivered.
 * - `dead` / `held`: park with these facts (`answered5xx`: the server answered 5xx after it was sent).
 * - `retry`: back to queued, another attempt after the backoff (spends an attempt); `unanswered`: sent
 *   without an answer and sent again by choice (BULKORDER_AMBIGUOUS=resend).
 * - `rateLimited`: back to queued, the queue paused for `retryAfterMs` (spends no attempt).
 * - `credentials`: back to queued, a 401 with a fresh token: not the record's fault (spends no attempt).
 */
export type Verdict =
  | { next: 'delivered'; status: number; remoteId?: RemoteId }
  /** `log`: the log line's message. */
  | { next: 'dead' | 'held'; facts: ParkFacts; answered5xx: boolean; log: string }
  | { next: 'retry'; answered5xx: boolean; code: string; message: string; retryAfterMs?: number; status?: number; unanswered?: true }
  | { next: 'rateLimited'; retryAfterMs: number }
  | { next: 'credentials'; status: number; code: string; body?: unknown };

export function verdictOf(outcome: ApiOutcome, attempt: Pick<AttemptInfo, 'attempt' | 'maxAttempts'>, policy: 'hold' | 'resend', wording: RecordWording = ORDER_WORDING): Verdict {
  const noun = wording.noun;
  switch (outcome.kind) {
    case 'delivered':
      return { next: 'delivered', status: outcome.status, ...(outcome.remoteId === undefined ? {} : { remoteId: outcome.remoteId }) };
    case 'ambiguous': {
      if (policy === 'resend') return { next: 'retry', unanswered: true, answered5xx: answeredAfterSending(outcome.status), code: outcome.code, message: outcome.message };
      const reason = `Sent, but no answer came (${outcome.code}: ${outcome.message}). The ${noun} may or may not exist on the service.`;
      return { next: 'held', answered5xx: false, log: 'held for review: sent without an answer', facts: { reason, code: outcome.code, message: outcome.message, ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }) } };
    }
    case 'rateLimited':
      return { next: 'rateLimited', retryAfterMs: outcome.retryAfterMs };
    case 'retry': {
      const answered5xx = answeredAfterSending(outcome.status);
      const status = outcome.status === undefined ? {} : { status: outcome.status };
      if (attempt.attempt >= attempt.maxAttempts) {
        const reason = `Gave up after ${attempt.attempt} attempts; the last failure was ${outcome.code}: ${outcome.message}.`;
        return { next: 'dead', answered5xx, log: 'dead-lettered: retries exhausted', facts: { reason, code: outcome.code, message: outcome.message, body: outcome.body, ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }) } };
      }
      return { next: 'retry', answered5xx, code: outcome.code, message: outcome.message, ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }), ...status };
    }
    case 'unauthorized':
      return { next: 'credentials', status: outcome.status, code: outcome.code, body: outcome.body };
    case 'permanent': {
      const reason = wording.refusal?.(outcome) ?? `The API refused the ${noun}: HTTP ${outcome.status} ${outcome.code}: ${outcome.message}`;
      // The API's details (which field, which product) travel into the ledger, so the results file shows them.
      return {
        next: 'dead',
        answered5xx: false,
        log: 'dead-lettered: refused by the API',
        facts: { reason, httpStatus: outcome.status, code: outcome.code, message: reasonWithDetails(outcome.message, outcome.body), body: outcome.body, bodyTruncated: outcome.bodyTruncated },
      };
    }
  }
}

/** Why a record found `sending` under an earlier claim is held: that attempt may or may not have reached the API. */
export function staleFacts(wording: RecordWording = ORDER_WORDING): ParkFacts & { reason: string } {
  const reason =
    `An earlier attempt was sending this ${wording.noun} when its worker stopped (crash, kill or lost lock): it may or may not ` +
    `have reached the API. ${wording.heldHint}`;
  return { reason, code: 'OUTCOME_UNKNOWN' };
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
