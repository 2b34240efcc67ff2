import { bullmq } from '../cjsPackages.js';
import { recordOfChunk, type ChunkRecord } from '../deliveryJob.js';
import type { UnpackedChunk } from '../ledger/jobData.js';
import type { SettleInput } from '../ledger/ledger.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';
import {
  CREDENTIALS_POSTPONE_MS,
  recordEvidence,
  RetryableDeliveryError,
  slowDown,
  type AttemptInfo,
  type DeliverDeps,
  type DeliveryResult,
} from './deliverRecord.js';
import { staleFacts, verdictOf, type Verdict } from './verdictOf.js';
import { verdictEffect } from './verdictEffect.js';
import { untilRecorded } from './untilRecorded.js';
import { notSentVerdict } from './refusedCustomers.js';
import type { RequestSlots } from './requestSlots.js';
import { sleepUntil, slotOf, type RateGrant } from './sharedRate.js';

/** What a chunk job needs beyond a job of one record's effects. */
export interface ChunkDeps<P> extends DeliverDeps<P> {
  /** The process's requests in flight (`--concurrency`), shared with its other jobs. */
  slots: RequestSlots;
  /** Told how each record of the chunk ended, as it ends (metrics). */
  onRecordEnded?(outcome: OrderOutcome): void;
  /** True once the worker is stopping: a chunk sends no further wave. */
  isClosing?(): boolean;
}

/** One attempt of a chunk job: `jobId` is the chunk's id, which its records' ledger entries name. */
export interface ChunkAttempt extends AttemptInfo {
  jobId: string;
}

/** How many records of the chunk ended how in this attempt (the job's result when it completes). */
export type ChunkCounts = Partial<Record<OrderOutcome, number>>;

/**
 * One attempt of a chunk job: several records of one batch (an import's, BULKORDER_ORDERS_PER_JOB),
 * each with its own ledger entry, outcome and parked record, as deliverRecord treats a job of one.
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
 * (the others are delivered, dead-lettered or held by then, and the claim skips them); a 429 slows
 * every worker down (the shared rate) and the job waits its Retry-After without spending an attempt,
 * as it waits after a refused token. Each record's
 * attempts are its chunk's: every record still queued at attempt k failed attempts 1..k-1.
 */
export async function deliverChunk<P>(
  chunk: UnpackedChunk<P>,
  attempt: ChunkAttempt,
  deps: ChunkDeps<P>,
): Promise<DeliveryResult> {
  const { slots } = deps;
  const started = performance.now();
  const counts: ChunkCounts = {};
  const ended = (outcome: OrderOutcome): void => {
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    deps.onRecordEnded?.(outcome);
  };
  const unfinished = await recordsToSend(chunk, attempt.jobId, deps);
  const wave = Math.min(unfinished.length, slots.capacity);
  const ends: WaveEnds = {
    retry: undefined,
    retryAfterMs: undefined,
    rateLimitMs: undefined,
    credentials: false,
    unsent: false,
    waitMs: undefined,
  };
  const batchFile = chunk.file ?? (await deps.batchFile(chunk.batchId));
  for (let start = 0; start < unfinished.length && !ends.unsent; start += wave) {
    const records = unfinished.slice(start, start + wave);
    await slots.acquire(records.length);
    // Each slot goes back as soon as its record needs it no more: the next job sends while this one settles.
    const held = { n: records.length };
    try {
      if (deps.isClosing?.() === true) {
        ends.unsent = true;
        break;
      }
      // Paced before the claim: a worker stopped while the wave waits its turn has marked nothing `sending`.
      const grant = (await deps.rate?.pace(records.length)) ?? { at: Date.now(), spacingMs: 0, paced: false };
      const wave: Wave<P> = { chunk, records, attempt: { ...attempt, grant }, batchFile, ends, ended };
      await sendWave(wave, deps, (n) => {
        const given = Math.min(n, held.n);
        held.n -= given;
        slots.release(given);
      });
    } finally {
      slots.release(held.n);
    }
  }
  // The attempt's one line at info (its records' `delivered` lines are at debug), however the job then ends.
  const pending = pendingOf(ends);
  deps.logger.info(
    {
      attempt: attempt.attempt,
      records: chunk.records.length,
      counts,
      ...(pending === undefined ? {} : { pending }),
      durationMs: Math.round(performance.now() - started),
    },
    'chunk done',
  );
  await endChunk(ends, deps);
  return { outcome: 'chunk', counts };
}

/**
 * The chunk's records its claim may still send. While a rate is in force, the records this chunk
 * already finished (a retried chunk after a 429 keeps one or two of ten) are left out before the
 * wave is paced: each record paced takes a slot of the shared rate, and a slot no request uses is
 * lost to every worker. Without a rate, every record (the claim skips the finished ones).
 */
async function recordsToSend<P>(chunk: UnpackedChunk<P>, jobId: string, deps: ChunkDeps<P>): Promise<ChunkRecord<P>[]> {
  if (deps.rate?.inForce() !== true) return chunk.records;
  const finished = await deps.ledger.finishedIn(
    chunk.records.map((record) => record.key),
    jobId,
  );
  return chunk.records.filter((_, i) => !finished[i]);
}

/** Why records of the chunk are left for later (endChunk's order), for the `chunk done` line; undefined: none are. */
function pendingOf(ends: WaveEnds): 'retry' | 'rateLimited' | 'credentials' | 'unsent' | undefined {
  if (ends.retry !== undefined) return 'retry';
  if (ends.rateLimitMs !== undefined) return 'rateLimited';
  if (ends.credentials) return 'credentials';
  return ends.unsent ? 'unsent' : undefined;
}

/** Ends the job as its records require, the most pressing first; returns when it completes. */
async function endChunk<P>(ends: WaveEnds, deps: ChunkDeps<P>): Promise<void> {
  if (ends.retry !== undefined) {
    if (deps.breaker.holdsBack()) {
      // The breaker is open: the outage is the API's, so the records keep their attempts for later.
      await deps.postpone(1000 + Math.round(Math.random() * 1000));
      throw new bullmq.DelayedError();
    }
    // A 429 answered beside it: the backoff is at least its Retry-After.
    const wait = Math.max(ends.retryAfterMs ?? 0, ends.rateLimitMs ?? 0);
    throw new RetryableDeliveryError(ends.retry.code, ends.retry.message, wait > 0 ? wait : undefined);
  }
  if (ends.rateLimitMs !== undefined) {
    // Every worker slowed down (the shared rate); the records answered 429 wait their Retry-After, attempts unspent.
    await deps.postpone(ends.rateLimitMs);
    throw new bullmq.DelayedError();
  }
  if (ends.credentials) {
    await deps.postpone(CREDENTIALS_POSTPONE_MS);
    throw new bullmq.DelayedError();
  }
  if (ends.unsent) {
    // The breaker is open or half-open (its trial went), or the worker is stopping: the rest waits,
    // attempts unspent. Briefly, not for the breaker's whole wait: an open breaker has paused the
    // queue, so the job rests there and goes on when it heals or a person resumes.
    await deps.postpone(Math.min(ends.waitMs ?? 1000, 2000) + Math.round(Math.random() * 1000));
    throw new bullmq.DelayedError();
  }
}

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

/** One wave of a chunk's attempt: its records, the shared rate's grant, and where its findings go. */
interface Wave<P> {
  chunk: UnpackedChunk<P>;
  records: ChunkRecord<P>[];
  attempt: ChunkAttempt & { grant: RateGrant };
  batchFile: string;
  ends: WaveEnds;
  ended(outcome: OrderOutcome): void;
}

/**
 * One wave: claimed in one script, sent in parallel (the caller holds a slot per record), settled in
 * one script. `release(n)` gives back n of the caller's slots: those of records not sent at once
 * after the claim, and each sent record's once its answer is in.
 */
async function sendWave<P>(wave: Wave<P>, deps: ChunkDeps<P>, release: (n: number) => void): Promise<void> {
  const claimed = await claimWave(wave, deps);
  if (claimed === undefined) return;
  const { toSend, settles, trial } = claimed;
  release(wave.records.length - toSend.length);
  const answers = await Promise.all(
    toSend.map(async (record, i) => {
      try {
        const customer = deps.customerOf?.(record.payload);
        // A customer a healthy trial of another proved refused: its order held back is not sent.
        const refused = deps.breaker.refusedAnswer(customer, wave.attempt.queuedAt);
        if (refused !== undefined) return { verdict: notSentVerdict(refused, deps.wording), durationMs: 0 };
        // Each at its own slot of the shared rate (none: all at once, without a wait to await).
        const at = slotOf(wave.attempt.grant, i).at;
        if (at > Date.now()) await sleepUntil(at);
        const started = performance.now();
        const outcome = await deps.send(record.payload, { key: record.key });
        const durationMs = Math.round(performance.now() - started);
        if (outcome.kind !== 'rateLimited') deps.rate?.accepted();
        // Recorded before the outcome's own effects, and before its slot lets another job send: a
        // refusal that opens the breaker pauses the queue at once.
        await recordEvidence(deps, outcome, record.key, customer);
        return { verdict: verdictOf(outcome, wave.attempt, deps.ledger.ambiguousPolicy, deps.wording), durationMs };
      } finally {
        release(1);
      }
    }),
  );
  for (const [i, { verdict, durationMs }] of answers.entries()) {
    const record = toSend[i]!;
    const facts = {
      orderKey: record.key,
      lines: record.lines,
      attempt: wave.attempt.attempt,
      durationMs,
      ...(trial ? { trial: true } : {}),
    };
    const effect = verdictEffect(verdict, recordOfChunk(wave.chunk, record), {
      token: wave.attempt.token,
      attempt: wave.attempt.attempt,
      file: wave.batchFile,
      logger: deps.logger,
      facts,
      deliveredLevel: 'debug',
    });
    settles.push(effect.settle);
    if (effect.ended !== undefined) wave.ended(effect.ended);
    // A delivered, dead or held record asks nothing of the job's end (most records: no call to await).
    if (verdict.next !== 'delivered' && verdict.next !== 'dead' && verdict.next !== 'held')
      await noteEnd(wave, verdict, slotOf(wave.attempt.grant, i), deps);
  }
  await settleWave(settles, deps);
  const { ends } = wave;
  // A record that must wait (429, breaker, credentials) stops the chunk here; the rest keep their attempts.
  if (ends.rateLimitMs !== undefined || ends.credentials || (ends.retry !== undefined && deps.breaker.holdsBack()))
    ends.unsent = true;
}

/**
 * Claims a wave's records in one script (the breaker asked once; half-open, one record is the
 * trial). Undefined when the breaker refused; otherwise the records to send, and the settles of
 * records the claim found held by an earlier attempt that may have sent them.
 */
async function claimWave<P>(
  wave: Wave<P>,
  deps: ChunkDeps<P>,
): Promise<{ toSend: ChunkRecord<P>[]; settles: SettleInput[]; trial: boolean } | undefined> {
  const { records, attempt, ends } = wave;
  const claim = await deps.ledger.claimMany(
    records.map((record) => record.key),
    attempt.token,
    attempt.jobId,
    deps.breaker.gate(deps.customerOf === undefined ? undefined : records.map((r) => deps.customerOf!(r.payload))),
  );
  const admission = deps.breaker.admission(
    claim.outcome === 'wait'
      ? claim
      : { outcome: 'claimed', attempt: 0, ...(claim.trial ? { trial: true as const } : {}) },
  );
  if (claim.outcome === 'wait' || !admission.go) {
    ends.unsent = true;
    ends.waitMs = admission.go ? undefined : admission.waitMs;
    return undefined;
  }
  const settles: SettleInput[] = [];
  const toSend: ChunkRecord<P>[] = [];
  for (const [i, found] of claim.records.entries()) {
    const record = records[i]!;
    if (found.outcome === 'claimed') toSend.push(record);
    else if (found.outcome === 'later') ends.unsent = true;
    // Queued in another job since (sent again from the dead letters, released from review): that job sends it.
    else if (found.outcome === 'moved' && attempt.attempt === 1) wave.ended('superseded');
    else if (found.outcome === 'stale') {
      const verdict: Verdict = {
        next: 'held',
        answered5xx: false,
        log: 'held for review: a previous attempt may have sent it',
        facts: staleFacts(deps.wording),
      };
      const facts = { orderKey: record.key, lines: record.lines };
      settles.push(
        verdictEffect(verdict, recordOfChunk(wave.chunk, record), {
          token: found.staleToken,
          attempt: attempt.attempt,
          file: wave.batchFile,
          logger: deps.logger,
          facts,
        }).settle,
      );
      wave.ended('held');
    }
    // delivered: its entry names this chunk, which delivered and counted it; held, dead: parked before.
  }
  return { toSend, settles, trial: claim.trial };
}

/** Notes what a record's verdict asks of the job's end (retry, 429, credentials); a 429 also slows every worker. */
async function noteEnd<P>(wave: Wave<P>, verdict: Verdict, grant: RateGrant, deps: ChunkDeps<P>): Promise<void> {
  const { ends } = wave;
  if (verdict.next === 'retry') {
    ends.retry = verdict;
    if (verdict.retryAfterMs !== undefined) ends.retryAfterMs = Math.max(ends.retryAfterMs ?? 0, verdict.retryAfterMs);
  } else if (verdict.next === 'rateLimited') {
    // The wave's first 429 cuts the shared rate; the others say nothing new.
    await slowDown(deps, grant, verdict.retryAfterMs);
    ends.rateLimitMs = Math.max(ends.rateLimitMs ?? 0, verdict.retryAfterMs);
  } else if (verdict.next === 'credentials') ends.credentials = true;
}

async function settleWave<P>(settles: SettleInput[], deps: ChunkDeps<P>): Promise<void> {
  const settled = await untilRecorded(
    () => deps.ledger.settleMany(settles),
    deps.recordRetry,
    // A stopping worker's last resort, one record at a time: settleMany's keys vary, so it has no flagged twin.
    async () => {
      const outcomes = [];
      for (const input of settles) outcomes.push(await deps.ledger.settleOverMemory(input));
      return outcomes;
    },
  );
  for (const [i, outcome] of settled.entries()) {
    if (outcome === 'lost')
      deps.logger.warn(
        { orderKey: settles[i]!.orderKey, state: settles[i]!.state },
        `another attempt owns this ${deps.wording?.noun ?? 'order'} now; left its state alone`,
      );
  }
}
