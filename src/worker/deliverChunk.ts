import { DelayedError, RateLimitError } from 'bullmq';
import { parkedRecord, recordOfChunk, type ChunkJobData, type ChunkRecord } from '../deliveryJob.js';
import type { SettleInput } from '../ledger/ledger.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';
import { verdictOf, type Verdict } from './attemptVerdict.js';
import { CREDENTIALS_POSTPONE_MS, ORDER_WORDING, RetryableDeliveryError, type AttemptInfo, type DeliverDeps, type DeliveryResult } from './deliverOrder.js';
import type { RequestSlots } from './requestSlots.js';

/** What a chunk job needs beyond a job of one record's effects. */
export interface ChunkDeps<P> extends DeliverDeps<P> {
  /** The process's requests in flight (`--concurrency`), shared with its other jobs. */
  slots: RequestSlots;
  /** Told how each record of the chunk ended, as it ends (metrics). */
  onRecordEnded?(outcome: OrderOutcome): void;
}

/** One attempt of a chunk job: `jobId` is the chunk's id, which its records' ledger entries name. */
export interface ChunkAttempt extends AttemptInfo {
  jobId: string;
}

/** How many records of the chunk ended how in this attempt (the job's result when it completes). */
export type ChunkCounts = Partial<Record<OrderOutcome, number>>;

/**
 * One attempt of a chunk job: several records of one batch (an import's, BULKORDER_ORDERS_PER_JOB),
 * each with its own ledger entry, outcome and parked record, as deliverOrder treats a job of one.
 *
 * The records are claimed in one script (the circuit breaker asked once; half-open, one record is
 * the trial), sent in parallel within the process's request slots (taken before the claim, so no
 * record is marked `sending` while it waits for a slot), and settled together in one script once
 * every answer is in. Then the job ends as its records require: records that should be tried again
 * (5xx, no connection) keep the job for another attempt after the backoff, and that attempt sends
 * only them (the others are delivered, dead-lettered or held by then, and the claim skips them);
 * a 429 pauses the queue and the job waits without spending an attempt, as does a refused token.
 * Each record's attempts are its chunk's: every record still queued at attempt k failed attempts 1..k-1.
 */
export async function deliverChunk<P>(chunk: ChunkJobData<P>, attempt: ChunkAttempt, deps: ChunkDeps<P>): Promise<DeliveryResult> {
  const { ledger, logger, slots } = deps;
  const wording = deps.wording ?? ORDER_WORDING;
  const counts: ChunkCounts = {};
  const ended = (outcome: OrderOutcome): void => {
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    deps.onRecordEnded?.(outcome);
  };
  // Slots first, then the claim: a record is `sending` only while it is really being sent.
  let slotsHeld = Math.min(chunk.records.length, slots.capacity);
  await slots.acquire(slotsHeld);
  const giveBack = (n: number): void => {
    const given = Math.min(n, slotsHeld);
    slotsHeld -= given;
    slots.release(given);
  };
  try {
    const claim = await ledger.claimMany(
      chunk.records.map((record) => record.key),
      attempt.token,
      attempt.jobId,
      deps.breaker.gate(),
    );
    const admission = deps.breaker.admission(claim.outcome === 'wait' ? claim : { outcome: 'claimed', attempt: 0, ...(claim.trial ? { trial: true as const } : {}) });
    if (claim.outcome === 'wait' || !admission.go) {
      giveBack(slotsHeld);
      await deps.postpone((admission.go ? 1000 : admission.waitMs) + Math.round(Math.random() * 1000));
      throw new DelayedError();
    }

    const settles: SettleInput[] = [];
    const toSend: ChunkRecord<P>[] = [];
    let later = 0;
    const batchFile = chunk.file ?? (await deps.batchFile(chunk.batchId));
    const park = (record: ChunkRecord<P>, token: string, kind: 'dead' | 'held', verdict: Extract<Verdict, { next: 'dead' | 'held' }>): void => {
      const facts = verdict.facts;
      settles.push({
        orderKey: record.key,
        batchId: chunk.batchId,
        token,
        state: kind,
        parkedRecord: parkedRecord(recordOfChunk(chunk, record), batchFile, kind, facts, attempt.attempt),
        ...(facts.httpStatus === undefined ? {} : { httpStatus: facts.httpStatus }),
        ...(facts.code === undefined ? {} : { code: facts.code }),
        ...(facts.message === undefined ? {} : { message: facts.message }),
        ...(verdict.answered5xx ? { answered5xx: true } : {}),
      });
    };
    for (const [i, found] of claim.records.entries()) {
      const record = chunk.records[i]!;
      switch (found.outcome) {
        case 'claimed':
          toSend.push(record);
          break;
        case 'delivered':
          // Delivered by an earlier attempt of this chunk (counted then), or before this import.
          if (attempt.attempt === 1) {
            logger.info({ orderKey: record.key, lines: record.lines, remoteId: found.remoteId }, 'already delivered: not sent again');
            ended('already_delivered');
          }
          break;
        case 'stale': {
          const reason =
            `An earlier attempt was sending this ${wording.noun} when its worker stopped (crash, kill or lost lock): it may or may not ` +
            `have reached the API. ${wording.heldHint}`;
          park(record, found.staleToken, 'held', { next: 'held', answered5xx: false, facts: { reason, code: 'OUTCOME_UNKNOWN' } });
          logger.warn({ orderKey: record.key, lines: record.lines, outcome: 'held', code: 'OUTCOME_UNKNOWN' }, 'held for review: a previous attempt may have sent it');
          ended('held');
          break;
        }
        case 'later':
          later++;
          break;
        case 'moved':
          // Queued in another job since (sent again from the dead letters, released from review): that job sends it.
          if (attempt.attempt === 1) ended('superseded');
          break;
        case 'held':
        case 'dead':
          break; // parked by an earlier attempt of this chunk, or held before this job began
      }
    }
    // The slots beyond what is sent go back now; a chunk larger than the slots sends the rest as slots free up.
    giveBack(slotsHeld - Math.min(slotsHeld, toSend.length));
    const inSlots = slotsHeld;

    const answers = await Promise.all(
      toSend.map(async (record, i) => {
        if (i >= inSlots) await slots.acquire(1);
        try {
          const started = performance.now();
          const outcome = await deps.send(record.payload, { key: record.key });
          const durationMs = Math.round(performance.now() - started);
          // Recorded before the outcome's own effects: a refusal that opens the breaker pauses the queue at once.
          await deps.breaker.record(outcome, record.key);
          return { outcome, durationMs };
        } finally {
          if (i >= inSlots) slots.release(1);
          else giveBack(1);
        }
      }),
    );

    let retry: Extract<Verdict, { next: 'retry' }> | undefined;
    let retryAfterMs: number | undefined;
    let rateLimitMs: number | undefined;
    let credentials = false;
    for (const [i, { outcome, durationMs }] of answers.entries()) {
      const record = toSend[i]!;
      const verdict = verdictOf(outcome, attempt, ledger.ambiguousPolicy, wording);
      const facts = { orderKey: record.key, lines: record.lines, attempt: attempt.attempt, durationMs, ...(claim.trial ? { trial: true } : {}) };
      const requeue = (answered5xx = false): void => {
        settles.push({ orderKey: record.key, batchId: chunk.batchId, token: attempt.token, state: 'queued', ...(answered5xx ? { answered5xx } : {}) });
      };
      switch (verdict.next) {
        case 'delivered':
          settles.push({ orderKey: record.key, batchId: chunk.batchId, token: attempt.token, state: 'delivered', remoteId: verdict.remoteId ?? '', httpStatus: verdict.status });
          logger.info({ ...facts, status: verdict.status, remoteId: verdict.remoteId }, 'delivered');
          ended('delivered');
          break;
        case 'dead':
        case 'held':
          park(record, attempt.token, verdict.next, verdict);
          logger.warn({ ...facts, status: verdict.facts.httpStatus, code: verdict.facts.code, body: verdict.facts.body }, verdict.next === 'dead' ? 'dead-lettered' : 'held for review: sent without an answer');
          ended(verdict.next === 'dead' ? 'dead_lettered' : 'held');
          break;
        case 'retry':
          requeue(verdict.answered5xx);
          retry = verdict;
          if (verdict.retryAfterMs !== undefined) retryAfterMs = Math.max(retryAfterMs ?? 0, verdict.retryAfterMs);
          logger.warn({ ...facts, status: verdict.status, code: verdict.code, retryAfterMs: verdict.retryAfterMs }, 'temporary failure: will retry');
          break;
        case 'rateLimited':
          requeue();
          rateLimitMs = Math.max(rateLimitMs ?? 0, verdict.retryAfterMs);
          logger.warn({ ...facts, status: 429, retryAfterMs: verdict.retryAfterMs }, 'rate limited: pausing the queue');
          break;
        case 'credentials':
          requeue();
          credentials = true;
          logger.error({ ...facts, status: verdict.status, code: verdict.code, body: verdict.body }, 'our credentials were refused even with a fresh token: not dead-lettered');
          break;
      }
    }
    const settled = await ledger.settleMany(settles);
    for (const [i, outcome] of settled.entries()) {
      if (outcome === 'lost') logger.warn({ orderKey: settles[i]!.orderKey, state: settles[i]!.state }, `another attempt owns this ${wording.noun} now; left its state alone`);
    }

    // The job ends as its records require, the most pressing first.
    if (rateLimitMs !== undefined) await deps.rateLimit(rateLimitMs);
    if (retry !== undefined) {
      if (deps.breaker.holdsBack()) {
        // The breaker is open: the outage is the API's, so the records keep their attempts for later.
        await deps.postpone(1000 + Math.round(Math.random() * 1000));
        throw new DelayedError();
      }
      // A 429 answered beside it: the backoff is at least its Retry-After (the queue is paused that long anyway).
      const wait = Math.max(retryAfterMs ?? 0, rateLimitMs ?? 0);
      throw new RetryableDeliveryError(retry.code, retry.message, wait > 0 ? wait : undefined);
    }
    if (rateLimitMs !== undefined) throw new RateLimitError();
    if (credentials) {
      await deps.postpone(CREDENTIALS_POSTPONE_MS);
      throw new DelayedError();
    }
    if (later > 0) {
      // Half-open: the trial went; the rest of the chunk waits for the breaker's verdict, attempts unspent.
      await deps.postpone(1000 + Math.round(Math.random() * 1000));
      throw new DelayedError();
    }
    return { outcome: 'chunk', counts };
  } finally {
    giveBack(slotsHeld);
  }
}
