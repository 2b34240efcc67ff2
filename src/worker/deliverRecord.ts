import { bullmq } from '../cjsPackages.js';
import type { Ledger, SettleInput } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import type { DeliveryJobData } from '../deliveryJob.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { RemoteId } from '../delivery/remoteId.js';
import type { CircuitBreaker } from './circuitBreaker.js';
import type { RateGrant, RequestPacer } from './sharedRate.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';
import type { RecordWording } from '../kinds/recordWording.js';
import { staleFacts, verdictOf, type Verdict } from './verdictOf.js';
import { verdictEffect } from './verdictEffect.js';
import { untilRecorded, type RecordRetry } from './untilRecorded.js';
import { isRedisConnectionError } from '../redisErrors.js';
import { notSentVerdict } from './refusedCustomers.js';

/** Effects a delivery attempt needs; injected so the logic is testable with the real parts. */
export interface DeliverDeps<P = unknown> {
  /**
   * The one API call that creates the record (POST /orders, POST /accounts), classified; never
   * throws for HTTP failures. `key` is the record's stable key (the Idempotency-Key header).
   */
  send(payload: P, record: { key: string }): Promise<ApiOutcome>;
  /** Whom a record is for (RecordKind.customerOf): the breaker weighs refusals by customers. */
  customerOf?(payload: P): string;
  /** Default ORDER_WORDING. */
  wording?: RecordWording;
  ledger: Ledger;
  breaker: CircuitBreaker;
  /** The file of a batch (its record keeps it), for a job that names none: its log lines and parked record. */
  batchFile(batchId: string): Promise<string>;
  logger: Logger;
  /** The request rate all workers share (src/worker/sharedRate.ts); none: requests go at once. */
  rate?: RequestPacer;
  /** Moves this job to delayed without spending an attempt (a failure that is not the order's). */
  postpone(ms: number): Promise<void>;
  /**
   * How an answer's settle outlasts a Redis that refuses writes (OOM) or is away: retried with
   * backoff until Redis takes it or the worker has stopped. None: a refused settle fails the job.
   */
  recordRetry?: RecordRetry;
}

export interface AttemptInfo {
  /** Unique per attempt; the ledger's claim token. */
  token: string;
  /** 1-based number of this attempt. */
  attempt: number;
  maxAttempts: number;
  /** When the job was queued (ms): an order of a customer proved refused, queued before that, is not sent. */
  queuedAt?: number;
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
 * retry (backoff), postpone or fail it. Never posts a record the ledger knows as delivered,
 * held, or possibly sent. Its answer's effects are a chunk's (verdictEffect); only how the job
 * ends is its own.
 */
export async function deliverRecord<P>(
  job: DeliveryJobData<P>,
  attempt: AttemptInfo,
  deps: DeliverDeps<P>,
): Promise<DeliveryResult> {
  const { ledger, logger } = deps;
  // Paced before the claim: a worker stopped while it waits its turn has marked nothing `sending`.
  const grant = (await deps.rate?.pace(1)) ?? { at: Date.now(), spacingMs: 0, paced: false };
  // The breaker is asked inside the claim's script, and only while this worker sees it open or
  // half-open. Open (or half-open with its trials taken), it keeps the job for later, attempt unspent.
  const customer = deps.customerOf?.(job.payload);
  const claim = await ledger.claim(
    job.key,
    attempt.token,
    deps.breaker.gate(customer === undefined ? undefined : [customer]),
  );
  const admission = deps.breaker.admission(claim);
  if (!admission.go) {
    await deps.postpone(admission.waitMs + Math.round(Math.random() * 1000));
    throw new bullmq.DelayedError();
  }
  switch (claim.outcome) {
    case 'delivered':
      logger.info({ remoteId: claim.remoteId }, 'already delivered: not sent again');
      return { outcome: 'already-delivered', remoteId: claim.remoteId };
    case 'held':
      return { outcome: 'held', reason: 'already held for review' };
    case 'moved':
      // Queued in a chunk job since (an import of the fixed row): that job sends it, not this one.
      logger.info('queued in another job: not sent by this one');
      return { outcome: 'superseded' };
    case 'stale':
      return holdStale(job, claim.staleToken, attempt, deps);
    default:
      break;
  }

  const { verdict, durationMs } = await attemptVerdict(job, attempt, deps, customer);
  // Bound per line rather than with logger.child(): a child per attempt costs ~4% of a worker's CPU.
  const facts = { attempt: attempt.attempt, durationMs, ...(admission.trial ? { trial: true } : {}) };
  await settle(
    deps,
    verdictEffect(verdict, job, {
      token: attempt.token,
      attempt: attempt.attempt,
      file: await fileOf(job, deps),
      logger,
      facts,
    }).settle,
  );
  return endJob(verdict, grant, deps);
}

/** An order found `sending` under an earlier claim (`staleToken`): held for review, never posted blindly. */
async function holdStale<P>(
  job: DeliveryJobData<P>,
  staleToken: string,
  attempt: AttemptInfo,
  deps: DeliverDeps<P>,
): Promise<DeliveryResult> {
  const verdict: Verdict = {
    next: 'held',
    answered5xx: false,
    log: 'held for review: a previous attempt may have sent it',
    facts: staleFacts(deps.wording),
  };
  const file = await fileOf(job, deps);
  const effect = verdictEffect(verdict, job, {
    token: staleToken,
    attempt: attempt.attempt,
    file,
    logger: deps.logger,
    facts: {},
  });
  await settle(deps, effect.settle);
  return { outcome: 'held', reason: verdict.facts.reason };
}

/**
 * Sends the claimed record and reads its answer; an order of a customer a healthy trial of another
 * customer proved refused, queued before, is not sent: it gets the answer that refused its customer.
 */
async function attemptVerdict<P>(
  job: DeliveryJobData<P>,
  attempt: AttemptInfo,
  deps: DeliverDeps<P>,
  customer: string | undefined,
): Promise<{ verdict: Verdict; durationMs: number }> {
  const refused = deps.breaker.refusedAnswer(customer, attempt.queuedAt);
  if (refused !== undefined) return { verdict: notSentVerdict(refused, deps.wording), durationMs: 0 };
  const started = performance.now();
  const outcome = await deps.send(job.payload, { key: job.key });
  const durationMs = Math.round(performance.now() - started);
  if (outcome.kind !== 'rateLimited') deps.rate?.accepted();
  // Recorded before the outcome's own effects: a refusal that opens the breaker pauses the queue at once.
  await recordEvidence(deps, outcome, job.key, customer);
  return { verdict: verdictOf(outcome, attempt, deps.ledger.ambiguousPolicy, deps.wording), durationMs };
}

/** How a job of one record ends after its answer is recorded: a result, or BullMQ's error for what comes next. */
async function endJob<P>(verdict: Verdict, grant: RateGrant, deps: DeliverDeps<P>): Promise<DeliveryResult> {
  switch (verdict.next) {
    case 'delivered':
      return {
        outcome: 'delivered',
        status: verdict.status,
        ...(verdict.remoteId === undefined ? {} : { remoteId: verdict.remoteId }),
      };
    case 'held':
      return { outcome: 'held', reason: verdict.facts.reason };
    case 'dead':
      // A refusal is about the record unless the breaker's evidence says otherwise; if it opens,
      // the records its burst dead-lettered go back to the queue when it closes.
      throw new bullmq.UnrecoverableError(verdict.facts.reason);
    case 'retry':
      if (!verdict.unanswered && deps.breaker.holdsBack()) {
        // The breaker is open: the outage is the API's, so the record keeps its attempts for later.
        deps.logger.warn('the circuit breaker is open: waits without spending an attempt');
        await deps.postpone(1000 + Math.round(Math.random() * 1000));
        throw new bullmq.DelayedError();
      }
      throw new RetryableDeliveryError(
        verdict.code,
        verdict.message,
        verdict.unanswered ? undefined : verdict.retryAfterMs,
      );
    case 'rateLimited':
      // Every worker slows down together (the shared rate); this record waits its Retry-After, attempt unspent.
      await slowDown(deps, grant, verdict.retryAfterMs);
      await deps.postpone(verdict.retryAfterMs);
      throw new bullmq.DelayedError();
    case 'credentials':
      // Not about the record: it waits, attempt unspent; the breaker opens when 401s repeat.
      await deps.postpone(CREDENTIALS_POSTPONE_MS);
      throw new bullmq.DelayedError();
  }
}

/** Tells the shared rate of a 429; a Redis error here must not lose the record's own outcome. */
export async function slowDown<P>(deps: DeliverDeps<P>, grant: RateGrant, retryAfterMs: number): Promise<void> {
  await deps.rate
    ?.slowDown(grant, retryAfterMs)
    .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not slow the shared rate down'));
}

/** The file a record's parked record and log lines name: its job's, or its batch's. */
async function fileOf<P>(job: DeliveryJobData<P>, deps: DeliverDeps<P>): Promise<string> {
  return job.file ?? (await deps.batchFile(job.batchId));
}

/**
 * Tells the breaker of an answer. A Redis that refuses the write (OOM, away) costs the breaker one
 * piece of evidence, never the answer itself: the settle that follows waits for Redis instead.
 */
export async function recordEvidence<P>(
  deps: DeliverDeps<P>,
  outcome: ApiOutcome,
  key: string,
  customer: string | undefined,
): Promise<void> {
  try {
    await deps.breaker.record(outcome, key, customer);
  } catch (error) {
    if (deps.recordRetry === undefined || !isRedisConnectionError(error)) throw error;
    deps.recordRetry.onRefused(error as Error);
  }
}

async function settle<P>(deps: DeliverDeps<P>, input: SettleInput): Promise<void> {
  const settled = await untilRecorded(
    () => deps.ledger.settle(input),
    deps.recordRetry,
    () => deps.ledger.settleOverMemory(input),
  );
  if (settled === 'lost')
    deps.logger.warn(
      { state: input.state },
      `another attempt owns this ${deps.wording?.noun ?? 'order'} now; left its state alone`,
    );
}
