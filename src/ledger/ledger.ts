import type { RedisClient } from '../redis.js';
import type { Keyspace, ParkedKind } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';
import { toEntry } from './ledgerEntry.js';
import { claim, claimMany, settle, settleMany } from './ledgerClaims.js';
import { confirmChunks, confirmQueued, reserveChunks, reserveJobs, stranded, touchStranded } from './ledgerReserve.js';
import { purgeParked, release, resolveDelivered, unrelease } from './ledgerReview.js';
import type {
  ChunkClaimResult,
  ChunkReservation,
  ClaimGate,
  ClaimResult,
  LedgerEntry,
  LedgerOptions,
  LedgerScope,
  LedgerState,
  ReleaseResult,
  Reservation,
  ReserveResult,
  ReviewInput,
  SettleInput,
  SettleOutcome,
  StrandedEntry,
} from './ledgerTypes.js';

export type * from './ledgerTypes.js';
export { possibleDuplicate, POSSIBLE_DUPLICATE } from './ledgerEntry.js';

const DAY = 24 * 60 * 60 * 1000;

/**
 * The delivery ledger: the promise that an order is never sent twice. BullMQ forgets a
 * job id once the job is removed; the ledger remembers each order key for `retentionMs`
 * (per environment, through the keyspace prefix): `queued` when an import takes it,
 * `sending` before the POST, `delivered` with the API's answer after it. Every transition is one
 * Lua script (src/lua/scripts/); its parts: ledgerReserve.ts (reserve, confirm, stranded),
 * ledgerClaims.ts (claim, settle), ledgerReview.ts (a person's release and resolve), ledgerEntry.ts
 * (the entry's fields, read back).
 */
export class Ledger {
  readonly retentionMs: number;
  readonly parkedRetentionMs: number;
  readonly staleQueuedMs: number;
  readonly ambiguousPolicy: 'hold' | 'resend';
  private readonly scope: LedgerScope;

  constructor(redis: RedisClient, keys: Keyspace, options: LedgerOptions) {
    this.retentionMs = options.retentionMs ?? 90 * DAY;
    this.parkedRetentionMs = options.parkedRetentionMs ?? 30 * DAY;
    this.staleQueuedMs = options.staleQueuedMs ?? 60 * 1000;
    this.ambiguousPolicy = options.ambiguousPolicy ?? 'hold';
    this.scope = {
      redis: defineScripts(redis),
      keys,
      retentionMs: this.retentionMs,
      parkedRetentionMs: this.parkedRetentionMs,
      staleQueuedMs: this.staleQueuedMs,
      ambiguousPolicy: this.ambiguousPolicy,
      queueName: options.queueName,
      jobPrefix: keys.job(options.queueName, ''),
    };
  }

  /**
   * Reserves records for one batch in one round trip, each with its fingerprint and its job: the
   * job stays in the ledger until `confirmQueued`, so a crash between reserving and queueing
   * strands nothing (see `stranded`). Imports, `dead-letters retry` and the breaker's burst
   * requeue all reserve this way.
   */
  reserveJobs(items: readonly Reservation[], batchId: string, force: boolean): Promise<ReserveResult[]> {
    return reserveJobs(this.scope, items, batchId, force);
  }

  /**
   * Reserves chunks of records for one batch, each chunk into one job (`chunkIds[i]` its job id,
   * `job.name` its name, `job.layout` its packed payloads' layout), in one round trip: each record as
   * reserveJobs does, and each chunk's job, holding the records reserved, kept until `confirmChunks`.
   * Returns each record's result.
   */
  reserveChunks(
    chunks: readonly (readonly ChunkReservation[])[],
    chunkIds: readonly string[],
    job: { name: string; layout: number | undefined },
    batchId: string,
    force: boolean,
  ): Promise<ReserveResult[][]> {
    return reserveChunks(this.scope, chunks, chunkIds, job, batchId, force);
  }

  /**
   * The chunk jobs are in BullMQ: drops their kept jobs and counts, once, each record still
   * reserved into its chunk by `batchId`. Returns how many this call counted.
   */
  confirmChunks(
    chunks: readonly { chunkId: string; orderKeys: readonly string[] }[],
    batchId: string,
  ): Promise<number> {
    return confirmChunks(this.scope, chunks, batchId);
  }

  /**
   * The jobs of these keys are in BullMQ: drops the kept jobs and counts each order once as
   * queued by `batchId` (not those reserved `alreadyCounted`). Returns how many this call counted.
   */
  confirmQueued(orderKeys: readonly string[], batchId: string): Promise<number> {
    return confirmQueued(this.scope, orderKeys, batchId);
  }

  /** Up to `limit` reservations made before `before` (ms) whose job is not known to be queued, oldest first. */
  stranded(before: number, limit: number): Promise<StrandedEntry[]> {
    return stranded(this.scope, before, limit);
  }

  /** Moves index members to the back of the `stranded` order (their importer is alive), or drops them (`score` undefined: nothing left to do). */
  touchStranded(orderKeys: readonly string[], score: number | undefined): Promise<void> {
    return touchStranded(this.scope, orderKeys, score);
  }

  /**
   * Marks an order `sending` for this attempt, unless its state forbids sending it. With a
   * `gate`, the gate is asked first, in the same script: `wait` when it refuses.
   */
  claim(orderKey: string, token: string, gate?: ClaimGate, chunkId = ''): Promise<ClaimResult> {
    return claim(this.scope, orderKey, token, gate, chunkId);
  }

  /**
   * Claims the records of chunk job `chunkId` for one attempt of it, in one script: the gate (when
   * given) asked once, each record as `claim` would, except that a record dead-lettered by an
   * earlier attempt of the chunk is `dead`, and half-open only one record is claimed (a trial).
   */
  claimMany(orderKeys: readonly string[], token: string, chunkId: string, gate?: ClaimGate): Promise<ChunkClaimResult> {
    return claimMany(this.scope, orderKeys, token, chunkId, gate);
  }

  /** Records how an attempt ended. `lost` means another attempt owns the order now. */
  settle(input: SettleInput): Promise<SettleOutcome> {
    return settle(this.scope, input);
  }

  /**
   * The same settle, allowed above Redis's maxmemory (allow-oom): for a worker that stops while Redis is
   * full, so an answer the API gave is recorded instead of held as "outcome unknown". Redis 7 or later.
   */
  settleOverMemory(input: SettleInput): Promise<SettleOutcome> {
    return settle(this.scope, input, true);
  }

  /** Records how several attempts ended (a chunk job's records) in one script; each batch counter is added once. */
  settleMany(inputs: readonly SettleInput[]): Promise<SettleOutcome[]> {
    return settleMany(this.scope, inputs);
  }

  /** Reads many entries in one round trip; `undefined` where the ledger has none. */
  async getMany(orderKeys: readonly string[]): Promise<(LedgerEntry | undefined)[]> {
    if (orderKeys.length === 0) return [];
    const pipeline = this.scope.redis.pipeline();
    for (const key of orderKeys) pipeline.hgetall(this.scope.keys.ledger(key));
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply]) => {
      if (error) throw error;
      return toEntry(reply as Record<string, string>);
    });
  }

  /**
   * Which records of chunk job `chunkId` are finished in it (delivered, dead-lettered or held, the
   * entry still naming the chunk): its claim would skip them. One round trip, no script.
   */
  async finishedIn(orderKeys: readonly string[], chunkId: string): Promise<boolean[]> {
    if (orderKeys.length === 0) return [];
    const pipeline = this.scope.redis.pipeline();
    for (const key of orderKeys) pipeline.hmget(this.scope.keys.ledger(key), 's', 'q', 'b');
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply]) => {
      if (error) throw error;
      const [s, q, b] = reply as (string | null)[];
      const mine = q ? `${b ?? ''}.${q}` : '';
      return mine === chunkId && (s === 'delivered' || s === 'dead' || s === 'held');
    });
  }

  /** The claim token of the attempt now sending this order, if any. */
  async currentToken(orderKey: string): Promise<string | undefined> {
    // A delivered entry keeps an emptied token (settleOne): '' is none.
    return (await this.scope.redis.hget(this.scope.keys.ledger(orderKey), 't')) || undefined;
  }

  async get(orderKey: string): Promise<LedgerEntry | undefined> {
    return (await this.getMany([orderKey]))[0];
  }

  /**
   * A person's `review release`: held -> queued in `batchId`, the held record removed, `job` kept
   * in the ledger like an import's reservation, so the caller adds the job and calls
   * `confirmQueued` (or `unrelease` if adding it fails); a crash in between is finished by a
   * reconciler.
   */
  release(orderKey: string, batchId: string, review: ReviewInput, job: Reservation['job']): Promise<ReleaseResult> {
    return release(this.scope, orderKey, batchId, review, job);
  }

  /** Puts a released order back on hold (its job could not be added); false if it moved on meanwhile. */
  unrelease(
    orderKey: string,
    releasedBatchId: string,
    previousBatchId: string,
    record: string,
    parkedAt: number,
  ): Promise<boolean> {
    return unrelease(this.scope, orderKey, releasedBatchId, previousBatchId, record, parkedAt);
  }

  /**
   * A person's `review resolve --delivered`: held -> delivered without sending, recorded as
   * theirs; the held batch counts it delivered. Returns `resolved` or the state that forbids it.
   */
  resolveDelivered(
    orderKey: string,
    review: ReviewInput & { remoteId?: string },
  ): Promise<'resolved' | LedgerState | 'missing'> {
    return resolveDelivered(this.scope, orderKey, review);
  }

  /** Drops parked records (a dead letter a person gave up on); the ledger entry stays as it is. Returns how many existed. */
  purgeParked(kind: ParkedKind, orderKeys: readonly string[]): Promise<number> {
    return purgeParked(this.scope, kind, orderKeys);
  }
}
