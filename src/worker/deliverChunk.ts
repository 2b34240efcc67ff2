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
  type ChunkCounts,
  type DeliverDeps,
  type DeliveryResult,
} from './deliveryDeps.js';
import { cancelledVerdict, staleVerdict, vanishedVerdict, verdictOf, type Verdict } from './verdictOf.js';
import { verdictEffect } from './verdictEffect.js';
import { untilRecorded } from './untilRecorded.js';
import { notSentVerdict } from './refusedCustomers.js';
import type { BatchCanary, CanaryDecision } from './batchCanary.js';
import { UNPACED, type RateGrant } from './sharedRate.js';
import { defined } from '../errors.js';
import type { BatchWait } from '../batches/putBackChunks.js';

/**
 * One attempt of a delivery job: the records of one batch it holds (an import's
 * BULKORDER_ORDERS_PER_JOB, a requeue's one), each with its own ledger entry, claim, outcome and
 * parked record: claimed in the ledger, posted, and its outcome recorded. Never posts a record the
 * ledger knows as delivered, held, or possibly sent.
 *
 * The records go in waves of at most the process's request slots (taken first, so no record is
 * marked `sending` while it waits for a slot; one wave when the chunk fits, as it does by default;
 * each slot goes back as soon as its record's answer is in).
 * Each wave is claimed in one script (the circuit breaker asked once; half-open, one record is the
 * trial), sent in parallel, and settled together in one script once its answers are in. Before
 * each further wave the breaker is asked again, and a worker that is stopping sends no further
 * wave: the records not sent wait in the queue, attempts unspent, so an opened breaker or a SIGTERM
 * stops a chunk within one wave.
 *
 * A wave its batch keeps back whole for a moment (its file still read, its canary judging it) waits
 * in place, holding no request slot, up to IN_PLACE_MAX_MS, and asks again (at most twice: the
 * read, then the canary); past that, or for a held batch, the job rests delayed as below.
 *
 * Then the job ends as its records require (endChunk): records that should be tried again (5xx, no
 * connection) keep the job for another attempt after the backoff, and that attempt sends only them
 * (the others are delivered, dead-lettered or held by then, and the claim skips them); a 429 slows
 * every worker down (the shared rate) and the job waits its Retry-After without spending an attempt,
 * as it waits after a refused token. Each record's attempts are its chunk's: every record still
 * queued at attempt k failed attempts 1..k-1.
 */
export async function deliverChunk<P>(
  chunk: UnpackedChunk<P>,
  attempt: AttemptInfo,
  deps: DeliverDeps<P>,
): Promise<DeliveryResult> {
  const started = performance.now();
  const counts: ChunkCounts = {};
  const ended = (outcome: OrderOutcome): void => {
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    deps.onRecordEnded?.(outcome);
  };
  const unfinished = await recordsToSend(chunk, attempt.chunkId, deps);
  const waveSize = Math.min(unfinished.length, deps.slots.capacity);
  const ends: WaveEnds = {
    retry: undefined,
    retryAfterMs: undefined,
    rateLimitMs: undefined,
    credentials: false,
    unsent: false,
    waitMs: undefined,
    heldMs: undefined,
    batchWait: undefined,
    keptBack: undefined,
    vanished: [],
  };
  const batchFile = chunk.file ?? (await deps.batchFile(chunk.batchId));
  let waitsInPlace = 0;
  for (let start = 0; start < unfinished.length && !ends.unsent;) {
    const wave = { chunk, records: unfinished.slice(start, start + waveSize), attempt, batchFile, ends, ended };
    if (!(await runWave(wave, deps))) break;
    // Kept back whole by its batch for a moment (its file read, its canary judging): waits here, holding
    // no request slot, then asks again; at most twice (the read, then the canary), then it rests delayed.
    if (
      ends.keptBack !== undefined &&
      waitsInPlace++ < IN_PLACE_WAITS &&
      (await waitInPlace(chunk.batchId, ends, deps))
    )
      continue;
    start += waveSize;
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
  return { counts };
}

/**
 * One wave of the attempt with its request slots: all of them at once when they are free; if not,
 * once it leads the process's waves (RequestSlots.lead), one slot, and after the claim each record
 * it sends takes a slot of its own as one comes free (the first, that one), handing the lead on once
 * each has one. So no slot waits for a whole wave's worth to be free, nor for the claim's round trip,
 * and only the leading waves' records wait for a slot marked `sending`. Each slot goes back as soon
 * as its record needs it no more: the next job sends while this one settles. False, sending nothing,
 * when the worker is stopping.
 */
async function runWave<P>(wave: PlannedWave<P>, deps: DeliverDeps<P>): Promise<boolean> {
  const { slots } = deps;
  const { records, ends } = wave;
  const all = slots.tryAcquire(records.length);
  const handOn = all ? () => undefined : await slots.lead();
  const held = { n: all ? records.length : 1 };
  try {
    if (!all) await slots.acquire(1);
    try {
      if (deps.isClosing?.() === true) {
        ends.unsent = true;
        return false;
      }
      // Paced before the claim: a worker stopped while the wave waits its turn has marked nothing `sending`.
      const grant = (await deps.rate?.pace(records.length)) ?? UNPACED;
      await sendWave({ ...wave, attempt: { ...wave.attempt, grant } }, deps, {
        take: () => {
          if (held.n === 0) return slots.acquire(1);
          held.n--;
          return Promise.resolve();
        },
        give: () => slots.release(1),
        allTaken: handOn,
      });
      return true;
    } finally {
      slots.release(held.n);
    }
  } finally {
    handOn();
  }
}

/** How long a wave its batch kept back whole waits in place before its job rests delayed. */
const IN_PLACE_MAX_MS = 2_000;
/** Waits in place per attempt: the file's read, then the canary. */
const IN_PLACE_WAITS = 2;

/**
 * A wave its batch kept back whole waits in place (BatchCanary.untilFree, at most IN_PLACE_MAX_MS):
 * true once it may ask again (what kept it back is cleared from `ends`); false: the job rests delayed.
 */
async function waitInPlace<P>(batchId: string, ends: WaveEnds, deps: DeliverDeps<P>): Promise<boolean> {
  const wait = ends.keptBack;
  if (wait === undefined || deps.canary === undefined) return false;
  const free = await deps.canary.untilFree(batchId, wait, {
    maxMs: IN_PLACE_MAX_MS,
    stopping: () => deps.isClosing?.() === true,
  });
  if (!free) return false;
  Object.assign(ends, { unsent: false, heldMs: undefined, batchWait: undefined, keptBack: undefined });
  return true;
}

/**
 * The chunk's records its claim may still send. While a rate is in force, the records this chunk
 * already finished (a retried chunk after a 429 keeps one or two of ten) are left out before the
 * wave is paced: each record paced takes a slot of the shared rate, and a slot no request uses is
 * lost to every worker. Without a rate, every record (the claim skips the finished ones); a chunk
 * of one paces its record as it is: the look-up would cost a round trip to save at most one slot.
 */
async function recordsToSend<P>(
  chunk: UnpackedChunk<P>,
  chunkId: string,
  deps: DeliverDeps<P>,
): Promise<ChunkRecord<P>[]> {
  if (deps.rate?.inForce() !== true || chunk.records.length === 1) return chunk.records;
  const finished = await deps.ledger.finishedIn(
    chunk.records.map((record) => record.key),
    chunkId,
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
async function endChunk<P>(ends: WaveEnds, deps: DeliverDeps<P>): Promise<void> {
  if (ends.vanished.length > 0)
    // Their entries were gone (an evicting or forgetful Redis): sending could be a second copy. Held, never sent.
    deps.logger.error(
      { code: 'REDIS_KEYS_VANISHED', orderKeys: ends.vanished.slice(0, 20), count: ends.vanished.length },
      'ledger entries of this job vanished from Redis (evicted or lost): held for review, not sent; set maxmemory-policy noeviction',
    );
  if (ends.retry !== undefined) {
    if (deps.breaker.holdsBack()) {
      // The breaker is open: the outage is the API's, so the records keep their attempts for later.
      // A record sent without an answer (BULKORDER_AMBIGUOUS=resend) waits too: no answer is the
      // outage's evidence like a 5xx, and its chunk-mates must not pay for it. What bounds its
      // resends (each may store it once more) is its own count of sends, which a wait does not
      // reset: verdictOf holds it once it has been sent BULKORDER_ATTEMPTS times, however long the
      // breaker opens and reopens (a half-open trial may be it again).
      deps.logger.warn('the circuit breaker is open: waits without spending an attempt');
      await deps.postpone(1000 + Math.round(Math.random() * 1000));
      throw new (bullmq().DelayedError)();
    }
    // A 429 answered beside it: the backoff is at least its Retry-After.
    const wait = Math.max(ends.retryAfterMs ?? 0, ends.rateLimitMs ?? 0);
    throw new RetryableDeliveryError(ends.retry.code, ends.retry.message, wait > 0 ? wait : undefined);
  }
  if (ends.rateLimitMs !== undefined) {
    // Every worker slowed down (the shared rate); the records answered 429 wait their Retry-After, attempts unspent.
    await deps.postpone(ends.rateLimitMs);
    throw new (bullmq().DelayedError)();
  }
  if (ends.credentials) {
    // Not about the records: they wait, attempts unspent; the breaker opens when 401s repeat.
    await deps.postpone(CREDENTIALS_POSTPONE_MS);
    throw new (bullmq().DelayedError)();
  }
  if (ends.unsent) {
    // The breaker is open or half-open (its trial went), or the worker is stopping: the rest waits,
    // attempts unspent. Briefly, not for the breaker's whole wait: an open breaker has paused the
    // queue, so the job rests there and goes on when it heals or a person resumes.
    // The batch's own circuit (canary, held) says how long: a held batch's jobs rest until near its probe.
    const wait = ends.waitMs !== undefined ? Math.min(ends.waitMs, 2000) : (ends.heldMs ?? 1000);
    await deps.postpone(wait + Math.round(Math.random() * 1000), { batchWait: ends.batchWait });
    throw new (bullmq().DelayedError)();
  }
}

/** What the waves of one attempt found that decides how the job ends. */
interface WaveEnds {
  retry: Extract<Verdict, { next: 'retry' }> | undefined;
  retryAfterMs: number | undefined;
  rateLimitMs: number | undefined;
  credentials: boolean;
  /** Order keys whose ledger entry vanished (claimOne `vanished`): never sent, held (REDIS_KEYS_VANISHED). */
  vanished: string[];
  /** Records of the chunk were left unclaimed (breaker, stopping worker): the job waits. */
  unsent: boolean;
  /** The breaker's wait, when it refused the claim. */
  waitMs: number | undefined;
  /** The batch's circuit's wait (its canary judging it, or held), when it kept records back. */
  heldMs: number | undefined;
  /**
   * Records were kept back by their batch: its file still read (batchGate's `read`), or its circuit
   * judging or holding it (`judged`: `wait`, or a refusal deferred while judged). `read` wins.
   */
  batchWait: BatchWait | undefined;
  /**
   * The wave was kept back whole by its batch for a moment (its file read, or its canary judging it;
   * not a held batch): it may wait in place (waitInPlace) rather than rest delayed.
   */
  keptBack: BatchWait | undefined;
}

/** One wave of a chunk's attempt: its records, the shared rate's grant, and where its findings go. */
interface Wave<P> {
  chunk: UnpackedChunk<P>;
  records: ChunkRecord<P>[];
  attempt: AttemptInfo & { grant: RateGrant };
  batchFile: string;
  ends: WaveEnds;
  ended(outcome: OrderOutcome): void;
}

/** A wave before the shared rate's grant. */
type PlannedWave<P> = Omit<Wave<P>, 'attempt'> & { attempt: AttemptInfo };

/** A wave's request slots (runWave): one taken per record sent, in record order, each given back once its answer is in. */
interface WaveSlots {
  take(): Promise<void>;
  give(): void;
  /** Every record the wave sends has its slot (or none sends): the next wave may lead. */
  allTaken(): void;
}

/**
 * A wave's records' slots taken in record order, `allTaken` told once each record that asked has
 * its slot: `take` counts a record as it is called (map runs each callback up to its first await
 * before any slot is given), `mapped` after the last, for a wave none of whose records asked.
 */
function inTurn(slots: WaveSlots): { take(): Promise<void>; mapped(): void } {
  let wanted = 0;
  let taken = 0;
  return {
    take: async () => {
      wanted++;
      await slots.take();
      if (++taken === wanted) slots.allTaken();
    },
    mapped: () => {
      if (wanted === 0) slots.allTaken();
    },
  };
}

/**
 * One wave: claimed in one script, sent in parallel as its records get their request slots,
 * settled in one script.
 */
async function sendWave<P>(wave: Wave<P>, deps: DeliverDeps<P>, slots: WaveSlots): Promise<void> {
  const claimed = await claimWave(wave, deps);
  if (claimed === undefined) return;
  const { toSend, sends, settles, trial, canary } = claimed;
  const batchId = wave.chunk.batchId;
  const taking = inTurn(slots);
  const pending = Promise.all(
    toSend.map(async (record, i) => {
      const count = defined(sends[i], 'the sends of a claimed record');
      const sent = { attempt: wave.attempt.attempt, maxAttempts: wave.attempt.maxAttempts, sends: count };
      const decision = canary?.decisions.get(record.key);
      // The batch's circuit ends it unsent: cancelled by a person, or refused while the batch was judged.
      if (decision?.kind === 'cancel') return { verdict: cancelledVerdict(batchId, deps.wording), durationMs: 0 };
      if (decision?.kind === 'answer')
        return {
          verdict: verdictOf(decision.outcome, sent, deps.ledger.ambiguousPolicy, deps.wording),
          durationMs: 0,
        };
      const customer = deps.customerOf?.(record.payload);
      // A customer a healthy trial of another proved refused: its order held back is not sent.
      const refused = deps.breaker.refusedAnswer(customer, wave.attempt.queuedAt);
      if (refused !== undefined) return { verdict: notSentVerdict(refused, deps.wording), durationMs: 0 };
      await taking.take();
      try {
        // Each at its own slot of the shared rate (none: all at once, without a wait to await), on the
        // rate's clock (Redis's), taken again at the lower rate if the rate was lowered meanwhile.
        const slot = (await deps.rate?.turn(wave.attempt.grant, i)) ?? wave.attempt.grant;
        const started = performance.now();
        const outcome = await deps.send(record.payload, { key: record.key, batchId: wave.chunk.batchId });
        const durationMs = Math.round(performance.now() - started);
        // A 429 slows every worker down at once: this wave's requests still waiting go at the lower rate.
        if (outcome.kind === 'rateLimited') await slowDown(deps, slot, outcome.retryAfterMs);
        else deps.rate?.accepted();
        // Recorded before the outcome's own effects, and before its slot lets another job send: a
        // refusal that opens the breaker pauses the queue at once.
        await recordEvidence(deps, outcome, { key: record.key, customer, batch: batchId });
        const verdict = verdictOf(outcome, sent, deps.ledger.ambiguousPolicy, deps.wording);
        // A canary's or probe's final answer is the batch circuit's evidence; a refusal then waits with its batch.
        if (
          canary?.watched === true &&
          (verdict.next === 'delivered' || verdict.next === 'dead' || verdict.next === 'held')
        ) {
          const said = await defined(deps.canary, 'the batch canary').record(batchId, record.key, outcome);
          if (said === 'defer' && outcome.kind === 'permanent')
            return {
              verdict: {
                next: 'deferred' as const,
                status: outcome.status,
                code: outcome.code,
                message: outcome.message,
              },
              durationMs,
            };
        }
        return { verdict, durationMs };
      } finally {
        slots.give();
      }
    }),
  );
  taking.mapped();
  const answers = await pending;
  for (const [i, { verdict, durationMs }] of answers.entries()) {
    const record = defined(toSend[i], 'the record of an answer (one per record sent)');
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
    });
    settles.push(effect.settle);
    if (effect.ended !== undefined) wave.ended(effect.ended);
    // A delivered, dead or held record asks nothing of the job's end (most records: no call to await).
    if (verdict.next !== 'delivered' && verdict.next !== 'dead' && verdict.next !== 'held') noteEnd(wave, verdict);
  }
  await settleWave(settles, deps);
  const { ends } = wave;
  // A record that must wait (429, breaker, credentials) stops the chunk here; the rest keep their attempts.
  if (ends.rateLimitMs !== undefined || ends.credentials || (ends.retry !== undefined && deps.breaker.holdsBack()))
    ends.unsent = true;
}

/**
 * Claims a wave's records in one script (the breaker asked once; half-open, one record is the
 * trial). Undefined when the breaker refused; otherwise the records to send with how many times
 * each has been sent (this send included: its entry's attempts), and the settles of records the
 * claim found held by an earlier attempt that may have sent them.
 */
async function claimWave<P>(
  wave: Wave<P>,
  deps: DeliverDeps<P>,
): Promise<
  | {
      toSend: ChunkRecord<P>[];
      sends: number[];
      settles: SettleInput[];
      trial: boolean;
      canary: WaveCanary | undefined;
    }
  | undefined
> {
  const { attempt, ends } = wave;
  let records = wave.records;
  let canary: WaveCanary | undefined;
  if (deps.canary !== undefined) {
    // The batch's own circuit first: records its canary or its hold keeps back are not claimed.
    const admitted = await admitByCanary(wave, deps.canary);
    if (admitted === undefined) return undefined;
    ({ records, canary } = admitted);
  }
  const { customerOf } = deps;
  const claim = await deps.ledger.claimMany(
    records.map((record) => record.key),
    attempt.token,
    attempt.chunkId,
    deps.breaker.gate(customerOf === undefined ? undefined : records.map((r) => customerOf(r.payload))),
  );
  const admission = deps.breaker.admission(claim);
  if (claim.outcome === 'wait' || !admission.go) {
    ends.unsent = true;
    ends.waitMs = admission.go ? undefined : admission.waitMs;
    return undefined;
  }
  const settles: SettleInput[] = [];
  const toSend: ChunkRecord<P>[] = [];
  const sends: number[] = [];
  for (const [i, found] of claim.records.entries()) {
    const record = defined(records[i], 'the record of a claim (one per record)');
    if (found.outcome === 'claimed') {
      toSend.push(record);
      sends.push(found.attempt);
    } else if (found.outcome === 'later') ends.unsent = true;
    // Queued in another job since (sent again from the dead letters, released from review): that job sends it.
    else if (found.outcome === 'moved' && attempt.attempt === 1) wave.ended('superseded');
    else if (found.outcome === 'vanished') {
      // Never read as moved (that would skip it silently): written back and held, since it may have been delivered.
      ends.vanished.push(record.key);
      if (await deps.ledger.reclaimVanished(record.key, wave.chunk.batchId, attempt.token))
        settles.push(
          holdForReview(wave, record, { verdict: vanishedVerdict(deps.wording), token: attempt.token }, deps),
        );
    } else if (found.outcome === 'stale') {
      // Found `sending` under an earlier claim: held for review with that claim's token, never posted blindly.
      settles.push(holdForReview(wave, record, { verdict: staleVerdict(deps.wording), token: found.staleToken }, deps));
    }
    // delivered: its entry names this chunk, which delivered and counted it; held, dead: parked before.
  }
  return { toSend, sends, settles, trial: claim.trial, canary };
}

/** What the batch's circuit said of a wave's records, kept for their answers: its decisions, and whether it watches them. */
interface WaveCanary {
  decisions: Map<string, CanaryDecision>;
  watched: boolean;
}

/**
 * Asks the batch's circuit (its canary, or its hold) which of a wave's records may be claimed.
 * Undefined when it keeps all of them back; the records it keeps back leave the chunk unsent, to wait
 * its `waitMs`.
 */
async function admitByCanary<P>(
  wave: Wave<P>,
  batchCanary: BatchCanary,
): Promise<{ records: ChunkRecord<P>[]; canary: WaveCanary } | undefined> {
  const { records, ends } = wave;
  const gate = await batchCanary.admit(
    wave.chunk.batchId,
    records.map((record) => record.key),
  );
  const decisions = new Map<string, CanaryDecision>();
  const go = records.filter((record, i) => {
    const decision = defined(gate.decisions[i], 'the canary decision of a record (one per record)');
    decisions.set(record.key, decision);
    if (decision.kind === 'read') ends.batchWait = 'read';
    else if (decision.kind === 'wait') ends.batchWait ??= 'judged';
    return decision.kind !== 'wait' && decision.kind !== 'read';
  });
  if (go.length < records.length) {
    ends.unsent = true;
    ends.heldMs = Math.max(ends.heldMs ?? 0, gate.waitMs);
  }
  if (go.length > 0) return { records: go, canary: { decisions, watched: gate.watched } };
  if (ends.batchWait === 'read') ends.keptBack = 'read';
  else if (gate.state === 'canary') ends.keptBack = 'judged';
  return undefined;
}

/**
 * A record the claim found in doubt (its entry vanished, or `sending` under an earlier claim), held
 * for review under `held.token` with `held.verdict`: counted as held, and its settle returned.
 */
function holdForReview<P>(
  wave: Wave<P>,
  record: ChunkRecord<P>,
  held: { verdict: Verdict; token: string },
  deps: DeliverDeps<P>,
): SettleInput {
  const facts = { orderKey: record.key, lines: record.lines };
  const { settle } = verdictEffect(held.verdict, recordOfChunk(wave.chunk, record), {
    token: held.token,
    attempt: wave.attempt.attempt,
    file: wave.batchFile,
    logger: deps.logger,
    facts,
  });
  wave.ended('held');
  return settle;
}

/** Notes what a record's verdict asks of the job's end (retry, 429, credentials); a 429 slowed every worker as it came. */
function noteEnd<P>(wave: Wave<P>, verdict: Verdict): void {
  const { ends } = wave;
  if (verdict.next === 'retry') {
    ends.retry = verdict;
    if (verdict.retryAfterMs !== undefined) ends.retryAfterMs = Math.max(ends.retryAfterMs ?? 0, verdict.retryAfterMs);
  } else if (verdict.next === 'rateLimited') {
    ends.rateLimitMs = Math.max(ends.rateLimitMs ?? 0, verdict.retryAfterMs);
  } else if (verdict.next === 'credentials') ends.credentials = true;
  else if (verdict.next === 'deferred') {
    // Waits with its batch: the canary's verdict, or the held batch's probe.
    ends.unsent = true;
    ends.heldMs = Math.max(ends.heldMs ?? 0, 1500);
    ends.batchWait ??= 'judged';
  }
}

async function settleWave<P>(settles: SettleInput[], deps: DeliverDeps<P>): Promise<void> {
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
  for (const [i, { orderKey, state }] of settles.entries()) {
    if (settled[i] === 'lost')
      deps.logger.warn(
        { orderKey, state },
        `another attempt owns this ${deps.wording?.noun ?? 'order'} now; left its state alone`,
      );
  }
}
