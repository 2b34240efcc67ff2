import type { RedisClient } from '../redis.js';
import type { Keyspace, ParkedKind } from '../keyspace.js';
import type { ChunkJobData } from '../deliveryJob.js';
import { defineScripts } from '../lua/defineScripts.js';
import { toEntry } from './ledgerEntry.js';
import { claimMany, settleMany, settleOverMemory } from './ledgerClaims.js';
import { stuckSending, type StuckClaim } from './ledgerSending.js';
import { confirmChunks, reserveChunks, reserveRequeued, stranded, touchStranded } from './ledgerReserve.js';
import { purgeParked, release, resolveDelivered, unrelease } from './ledgerReview.js';
import type {
  ChunkClaimResult,
  ChunkJobs,
  ChunkReservation,
  ClaimGate,
  KeptJob,
  LedgerEntry,
  LedgerOptions,
  LedgerScope,
  LedgerState,
  Released,
  ReleaseResult,
  ReserveChunksOptions,
  ReserveResult,
  ReviewInput,
  SettleInput,
  SettleOutcome,
  StrandedEntry,
} from './ledgerTypes.js';
import { redisTime } from '../redis/redisClock.js';

export type * from './ledgerTypes.js';
export type { StuckClaim } from './ledgerSending.js';
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

  /** Redis's clock now (ms): the one every process compares reservation and claim times by. */
  now(): Promise<number> {
    return redisTime(this.scope.redis);
  }

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
   * Reserves chunks of records for one batch, each chunk into one job (`chunkIds[i]` its job id,
   * `jobs` what the jobs are: name, packed layout, file), in one round trip: each record with its
   * fingerprint, and each chunk's job, holding the records reserved, kept in the ledger until
   * `confirmChunks`, so a crash between reserving and queueing strands nothing (see `stranded`).
   * Imports, `dead-letters retry` and the breaker's burst requeue all reserve this way. A key
   * dead-lettered with the same content is `refused` (not sent again) unless `options.force` or
   * `options.retryRefused`. Returns each record's result.
   */
  reserveChunks(
    chunks: readonly (readonly ChunkReservation[])[],
    chunkIds: readonly string[],
    jobs: ChunkJobs,
    options: ReserveChunksOptions,
  ): Promise<ReserveResult[][]> {
    return reserveChunks(this.scope, { chunks, chunkIds, jobs, ...options });
  }

  /**
   * Reserves records sent again (dead-letters retry, the breaker's burst), each in a chunk of one
   * (`data` as src/ledger/jobData.ts requeuedChunk builds it, `id` its job id), as reserveChunks
   * reserves an import's but never compared by content. `alreadyCounted`: the breaker's burst,
   * back into the batch that counted them. Returns each one's result.
   */
  reserveRequeued(
    requeues: readonly { id: string; data: ChunkJobData<unknown> }[],
    jobs: Pick<ChunkJobs, 'name' | 'alreadyCounted'>,
    batchId: string,
  ): Promise<ReserveResult[]> {
    return reserveRequeued(this.scope, requeues, jobs, batchId);
  }

  /**
   * The chunk jobs are in BullMQ: drops their kept jobs and counts, once, each record still
   * reserved into its chunk by `batchId` (not those reserved `alreadyCounted`). Returns how many
   * this call counted.
   */
  confirmChunks(
    chunks: readonly { chunkId: string; orderKeys: readonly string[] }[],
    batchId: string,
  ): Promise<number> {
    return confirmChunks(this.scope, chunks, batchId);
  }

  /** Up to `limit` reservations made before `before` (ms) whose job is not known to be queued, oldest first. */
  stranded(before: number, limit: number): Promise<StrandedEntry[]> {
    return stranded(this.scope, before, limit);
  }

  /** Up to `limit` claims made before `before` (ms) whose job is gone or finished: nobody will settle them (ledgerSending.ts). */
  stuckSending(before: number, now: number, limit: number): Promise<StuckClaim[]> {
    return stuckSending(this.scope, before, now, limit);
  }

  /** Moves index members to the back of the `stranded` order (their importer is alive), or drops them (`score` undefined: nothing left to do). */
  touchStranded(orderKeys: readonly string[], score: number | undefined): Promise<void> {
    return touchStranded(this.scope, orderKeys, score);
  }

  /**
   * Claims the records of chunk job `chunkId` for one attempt of it, in one script: each marked
   * `sending` unless its state forbids sending it (ChunkClaim). With a `gate`, the gate is asked
   * once first, in the same script: `wait` when it refuses; half-open, only one record is claimed (a
   * trial). `chunkId` '': an earlier release's job of one record (ReadJob.chunkId).
   */
  claimMany(orderKeys: readonly string[], token: string, chunkId: string, gate?: ClaimGate): Promise<ChunkClaimResult> {
    return claimMany(this.scope, orderKeys, { token, chunkId, gate });
  }

  /**
   * Records how attempts ended (a chunk job's records) in one script; each batch counter is added
   * once. `lost`: another attempt owns that record now.
   */
  settleMany(inputs: readonly SettleInput[]): Promise<SettleOutcome[]> {
    return settleMany(this.scope, inputs);
  }

  /**
   * One record's settle, allowed above Redis's maxmemory (allow-oom): for a worker that stops while Redis is
   * full, so an answer the API gave is recorded instead of held as "outcome unknown". Redis 7 or later.
   */
  settleOverMemory(input: SettleInput): Promise<SettleOutcome> {
    return settleOverMemory(this.scope, input);
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

  /**
   * Writes back, as claimed by `token`, the entry of a record that vanished (claimMany's `vanished`),
   * so that it can be held like any claim: false when an entry exists again (another writer's).
   */
  async reclaimVanished(orderKey: string, batchId: string, token: string): Promise<boolean> {
    const key = this.scope.keys.ledger(orderKey);
    if ((await this.scope.redis.hsetnx(key, 's', 'sending')) === 0) return false;
    await this.scope.redis.hset(key, 't', token, 'b', batchId, 'u', String(await this.now()), 'a', '0');
    return true;
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
   * A person's `review release`: held -> queued in `batchId` in chunk `job.id`, the held record
   * removed, `job` kept in the ledger like an import's reservation, so the caller adds the job and
   * calls `confirmChunks` (or `unrelease` if adding it fails); a crash in between is finished by a
   * reconciler.
   */
  release(orderKey: string, batchId: string, review: ReviewInput, job: KeptJob): Promise<ReleaseResult> {
    return release(this.scope, orderKey, { batchId, review, job });
  }

  /** Puts a released order back on hold (its job could not be added); false if it moved on meanwhile. */
  unrelease(orderKey: string, released: Released): Promise<boolean> {
    return unrelease(this.scope, orderKey, released);
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

  /**
   * Links fixed rows to the dead letters they replace (an exported dead letter's `reject_key`): when
   * `orderKey` is delivered, the dead letter `replaces` is closed as superseded and its batch counts it
   * resolved (settleOne.lua). A link not used within the retention goes with the hash.
   */
  async linkSupersedes(links: readonly { orderKey: string; replaces: string }[]): Promise<void> {
    if (links.length === 0) return;
    const { redis, keys } = this.scope;
    await redis
      .multi()
      .hset(keys.supersedes, Object.fromEntries(links.map((link) => [link.orderKey, link.replaces])))
      .pexpire(keys.supersedes, this.retentionMs)
      .exec();
  }

  /**
   * Drops parked records (a dead letter a person gave up on); the ledger entry stays as it is, and the batch each was
   * parked in counts it resolved (a `purged` fix, with who and why when given). Returns how many existed.
   */
  purgeParked(
    kind: ParkedKind,
    orderKeys: readonly string[],
    decided?: { by?: string; note?: string },
  ): Promise<number> {
    return purgeParked(this.scope, kind, orderKeys, decided);
  }
}
