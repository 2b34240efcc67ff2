import { DelayedError, RateLimitError } from 'bullmq';
import { parkedRecord, recordOfChunk, unpackedRecord, type ChunkJobData, type ChunkRecord } from '../deliveryJob.js';
import type { SettleInput } from '../ledger/ledger.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';
import { ORDER_WORDING } from '../kinds/recordWording.js';
import { CREDENTIALS_POSTPONE_MS, RetryableDeliveryError, staleFacts, verdictOf, type AttemptInfo, type DeliverDeps, type DeliveryResult, type Verdict } from './deliverOrder.js';
import type { RequestSlots } from './requestSlots.js';

/** What a chunk job needs beyond a job of one record's effects. */
export interface ChunkDeps<P> extends DeliverDeps<P> {
  /** The process's requests in flight (`--concurrency`), shared with its other jobs. */
  slots: RequestSlots;
  /** Told how each record of the chunk ended, as it ends (metrics). */
  onRecordEnded?(outcome: OrderOutcome): void;
  /** True once the worker is stopping: a chunk sends no further wave. */
  isClosing?(): boolean;
  /** The kind's payload codec's unpack (RecordKind.payloadCodec): a chunk's records may be packed. */
  unpack?(packed: unknown): P;
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
 * The records go in waves of at most the process's request slots (taken first, so no record is
 * marked `sending` while it waits for a slot; one wave when the chunk fits, as it does by default;
 * each slot goes back as soon as its record's answer is in).
 * Each wave is claimed in one script (the circuit breaker asked once; half-open, one record is the
 * trial), sent in parallel, and settled together in one script once its answers are in. Before
 * each further wave the breaker is asked again, and a worker that is stopping sends no further
 * wave: the records not sent wait in the queue, attempts unspent, so an opened breaker or a SIGTERM
 * stops a chunk within one wave, as it stops that many jobs of one record.
 *
 * Then the job ends as its records require: records that should be tried again (5xx, no
 * connection) keep the job for another attempt after the backoff, and that attempt sends only them
 * (the others are delivered, dead-lettered or held by then, and the claim skips them); a 429 pauses
 * the queue and the job waits without spending an attempt, as does a refused token. Each record's
 * attempts are its chunk's: every record still queued at attempt k failed attempts 1..k-1.
 */
export async function deliverChunk<P>(stored: ChunkJobData<P>, attempt: ChunkAttempt, deps: ChunkDeps<P>): Promise<DeliveryResult> {
  const { logger, slots } = deps;
  const chunk: UnpackedChunk<P> = { ...stored, records: stored.records.map((record) => unpackedRecord(record, deps.unpack)) };
  const counts: ChunkCounts = {};
  const ended = (outcome: OrderOutcome): void => {
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    deps.onRecordEnded?.(outcome);
  };
  const wave = Math.min(chunk.records.length, slots.capacity);
  const ends: WaveEnds = { retry: undefined, retryAfterMs: undefined, rateLimitMs: undefined, credentials: false, unsent: false, waitMs: undefined };
  const batchFile = chunk.file ?? (await deps.batchFile(chunk.batchId));
  for (let start = 0; start < chunk.records.length && !ends.unsent; start += wave) {
    const records = chunk.records.slice(start, start + wave);
    await slots.acquire(records.length);
    // Each slot goes back as soon as its record needs it no more: the next job sends while this one settles.
    const held = { n: records.length };
    try {
      if (deps.isClosing?.() === true) {
        ends.unsent = true;
        break;
      }
      await sendWave(chunk, records, attempt, deps, batchFile, ends, ended, (n) => {
        const given = Math.min(n, held.n);
        held.n -= given;
        slots.release(given);
      });
    } finally {
      slots.release(held.n);
    }
  }

  // The job ends as its records require, the most pressing first.
  if (ends.rateLimitMs !== undefined) await deps.rateLimit(ends.rateLimitMs);
  if (ends.retry !== undefined) {
    if (deps.breaker.holdsBack()) {
      // The breaker is open: the outage is the API's, so the records keep their attempts for later.
      await deps.postpone(1000 + Math.round(Math.random() * 1000));
      throw new DelayedError();
    }
    // A 429 answered beside it: the backoff is at least its Retry-After (the queue is paused that long anyway).
    const wait = Math.max(ends.retryAfterMs ?? 0, ends.rateLimitMs ?? 0);
    throw new RetryableDeliveryError(ends.retry.code, ends.retry.message, wait > 0 ? wait : undefined);
  }
  if (ends.rateLimitMs !== undefined) throw new RateLimitError();
  if (ends.credentials) {
    await deps.postpone(CREDENTIALS_POSTPONE_MS);
    throw new DelayedError();
  }
  if (ends.unsent) {
    // The breaker is open or half-open (its trial went), or the worker is stopping: the rest waits,
    // attempts unspent. Briefly, not for the breaker's whole wait: an open breaker has paused the
    // queue, so the job rests there and goes on when it heals or a person resumes.
    await deps.postpone(Math.min(ends.waitMs ?? 1000, 2000) + Math.round(Math.random() * 1000));
    throw new DelayedError();
  }
  logger.debug({ counts }, 'chunk done');
  return { outcome: 'chunk', counts };
}

/** A chunk job's data with every payload unpacked. */
type UnpackedChunk<P> = Omit<ChunkJobData<P>, 'records'> & { records: ChunkRecord<P>[] };

/** What the waves of one attempt found that decides how the job ends. */
interface WaveEnds {
  retry: Extract<Verdict, { next: 'retry' }> | undefined;
  retryAfterMs: number | undefined;
  rateLimitMs: number | undefined;
  credentials: boolean;
  /** Records of the chunk were left unclaimed (breaker, stopping worker): the job waits. */
  unsent: boolean;
  /** The breaker's wait, when it refused the claim. */
  waitMs: number | undefined;
}

/**
 * One wave: claimed in one script, sent in parallel (the caller holds a slot per record), settled in
 * one script. `release(n)` gives back n of the caller's slots: those of records not sent at once
 * after the claim, and each sent record's once its answer is in.
 */
async function sendWave<P>(
  chunk: UnpackedChunk<P>,
  records: ChunkRecord<P>[],
  attempt: ChunkAttempt,
  deps: ChunkDeps<P>,
  batchFile: string,
  ends: WaveEnds,
  ended: (outcome: OrderOutcome) => void,
  release: (n: number) => void,
): Promise<void> {
  const { ledger, logger } = deps;
  const wording = deps.wording ?? ORDER_WORDING;
  const claim = await ledger.claimMany(
    records.map((record) => record.key),
    attempt.token,
    attempt.jobId,
    deps.breaker.gate(),
  );
  const admission = deps.breaker.admission(claim.outcome === 'wait' ? claim : { outcome: 'claimed', attempt: 0, ...(claim.trial ? { trial: true as const } : {}) });
  if (claim.outcome === 'wait' || !admission.go) {
    ends.unsent = true;
    ends.waitMs = admission.go ? undefined : admission.waitMs;
    return;
  }

  const settles: SettleInput[] = [];
  const toSend: ChunkRecord<P>[] = [];
  const park = (record: ChunkRecord<P>, token: string, verdict: Extract<Verdict, { next: 'dead' | 'held' }>): void => {
    const facts = verdict.facts;
    settles.push({
      orderKey: record.key,
      batchId: chunk.batchId,
      token,
      state: verdict.next,
      parkedRecord: parkedRecord(recordOfChunk(chunk, record), batchFile, verdict.next, facts, attempt.attempt),
      ...(facts.httpStatus === undefined ? {} : { httpStatus: facts.httpStatus }),
      ...(facts.code === undefined ? {} : { code: facts.code }),
      ...(facts.message === undefined ? {} : { message: facts.message }),
      ...(verdict.answered5xx ? { answered5xx: true } : {}),
    });
  };
  for (const [i, found] of claim.records.entries()) {
    const record = records[i]!;
    switch (found.outcome) {
      case 'claimed':
        toSend.push(record);
        break;
      case 'delivered':
        // Its entry names this chunk (or the claim would find it moved), so this chunk delivered it, and counted it then.
        break;
      case 'stale': {
        park(record, found.staleToken, { next: 'held', answered5xx: false, log: '', facts: staleFacts(wording) });
        logger.warn({ orderKey: record.key, lines: record.lines, outcome: 'held', code: 'OUTCOME_UNKNOWN' }, 'held for review: a previous attempt may have sent it');
        ended('held');
        break;
      }
      case 'later':
        ends.unsent = true;
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

  release(records.length - toSend.length);
  const answers = await Promise.all(
    toSend.map(async (record) => {
      try {
        const started = performance.now();
        const outcome = await deps.send(record.payload, { key: record.key });
        const durationMs = Math.round(performance.now() - started);
        // Recorded before the outcome's own effects, and before its slot lets another job send: a
        // refusal that opens the breaker pauses the queue at once.
        await deps.breaker.record(outcome, record.key);
        return { outcome, durationMs };
      } finally {
        release(1);
      }
    }),
  );

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
        park(record, attempt.token, verdict);
        logger.warn({ ...facts, outcome: verdict.next, status: verdict.facts.httpStatus, code: verdict.facts.code, body: verdict.facts.body }, verdict.log);
        ended(verdict.next === 'dead' ? 'dead_lettered' : 'held');
        break;
      case 'retry':
        requeue(verdict.answered5xx);
        ends.retry = verdict;
        if (verdict.retryAfterMs !== undefined) ends.retryAfterMs = Math.max(ends.retryAfterMs ?? 0, verdict.retryAfterMs);
        logger.warn({ ...facts, status: verdict.status, code: verdict.code, retryAfterMs: verdict.retryAfterMs }, 'temporary failure: will retry');
        break;
      case 'rateLimited':
        requeue();
        ends.rateLimitMs = Math.max(ends.rateLimitMs ?? 0, verdict.retryAfterMs);
        logger.warn({ ...facts, status: 429, retryAfterMs: verdict.retryAfterMs }, 'rate limited: pausing the queue');
        break;
      case 'credentials':
        requeue();
        ends.credentials = true;
        logger.error({ ...facts, status: verdict.status, code: verdict.code, body: verdict.body }, 'our credentials were refused even with a fresh token: not dead-lettered');
        break;
    }
  }
  const settled = await ledger.settleMany(settles);
  for (const [i, outcome] of settled.entries()) {
    if (outcome === 'lost') logger.warn({ orderKey: settles[i]!.orderKey, state: settles[i]!.state }, `another attempt owns this ${wording.noun} now; left its state alone`);
  }
  // A record that must wait (429, breaker, credentials) stops the chunk here; the rest keep their attempts.
  if (ends.rateLimitMs !== undefined || ends.credentials || (ends.retry !== undefined && deps.breaker.holdsBack())) ends.unsent = true;
}
