import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../redis.js';
import type { Keyspace, ParkedKind } from '../keyspace.js';
import { decodeRemoteId, encodeRemoteId, type RemoteId } from '../delivery/remoteId.js';
import { CLAIM, CLAIM_MANY, CONFIRM, CONFIRM_CHUNK, DROP_STRANDED, NO_GATE, RESERVE, RESERVE_CHUNK, SETTLE, SETTLE_MANY } from './ledgerScripts.js';
import type { Fingerprint } from './fingerprint.js';
import { keptChunkFrame } from './jobData.js';
import { RELEASE, RESOLVE, UNRELEASE } from './reviewScripts.js';

/** State of an order key in the delivery ledger. */
export type LedgerState = 'queued' | 'sending' | 'delivered' | 'dead' | 'held';

/** One ledger entry as read back. */
export interface LedgerEntry {
  state: LedgerState;
  batchId: string;
  attempts: number;
  updatedAt: number;
  /** The id the API returned, with its JSON type (string or number). */
  remoteId?: RemoteId;
  httpStatus?: number;
  code?: string;
  message?: string;
  deliveredAt?: number;
  /**
   * Attempts answered 5xx after the request was sent. Above 0 on a delivered order: an
   * earlier attempt may have stored it too (a possible duplicate, see possibleDuplicate()).
   */
  answered5xx?: number;
  /** The last thing a person did with this order (bulkorder review). */
  review?: ReviewMark;
  /** The content it was reserved with (absent on entries written before fingerprints were kept). */
  fingerprint?: Fingerprint;
  /** The chunk job it is queued in (`<b>.<q>`); absent: a job of its own, the key as its id. */
  chunkId?: string;
}

/** A person's decision on a held order, kept in its ledger entry. */
export interface ReviewMark {
  action: 'released' | 'resolved';
  by: string;
  at: number;
  note?: string;
}

/** Who decided, and why, for release and resolve. */
export interface ReviewInput {
  by: string;
  note?: string;
}

/** What `release` found: released (with the held record it removed) or the state that forbids it. */
export type ReleaseResult =
  | { outcome: 'released'; previousBatchId: string; record: string }
  | { outcome: 'not-held'; state: LedgerState | 'missing' };

/** What an import learns when it reserves an order key. */
export type ReserveResult =
  | { outcome: 'reserved' }
  | { outcome: 'delivered' | 'held' | 'queued'; batchId: string }
  /** The key is delivered, held or in flight with other content (a reused orderRef). */
  | { outcome: 'conflict'; batchId: string; parts: string; at: number; state: LedgerState };

/** One record to reserve with its content and the job that delivers it. */
export interface Reservation {
  orderKey: string;
  /** Absent: the content is not compared (a dead letter sent again as it was parked). */
  fingerprint?: Fingerprint;
  /** The BullMQ job (name and data), kept in the ledger until the job is known to be queued. */
  job: { name: string; data: unknown };
  /**
   * The batch counted this order as queued before (the breaker's burst goes back into its own
   * batch): confirming its job must not count it twice, and a dead letter of that batch stops
   * counting as dead in the same step.
   */
  alreadyCounted?: boolean;
}

/** A reservation whose job may never have reached BullMQ, as a reconciler finds it. */
export interface StrandedEntry {
  orderKey: string;
  /** Undefined when the entry expired (only its index member is left). */
  state: LedgerState | undefined;
  batchId: string;
  /** The kept job ({name, data} JSON); undefined once confirmed. */
  job: string | undefined;
  jobExists: boolean;
  /** A chunk job (`orderKey` is its job id): the keys of the records it holds. */
  chunkKeys?: string[];
}

/**
 * What a worker learns when it claims an order before sending it. `trial`: the gate, asked,
 * let this attempt through as one of its few trials (the circuit breaker's half-open state).
 */
export type ClaimResult = (
  | { outcome: 'claimed'; attempt: number }
  | { outcome: 'delivered'; remoteId: RemoteId }
  | { outcome: 'held' }
  /** The order is already `sending` under another claim: that attempt may or may not have reached the API. */
  | { outcome: 'stale'; staleToken: string }
  /** The order is queued in another job now (a dead letter sent again, a released held order): not this job's. */
  | { outcome: 'moved' }
) & { trial?: true } | ClaimRefused;

/**
 * What one record of a chunk job is, as its job's claim finds it: as ClaimResult, plus `dead` (an
 * earlier attempt of the chunk dead-lettered it) and `later` (not claimed: the gate let one trial
 * through, and another record of the chunk is it).
 */
export type ChunkClaim =
  | { outcome: 'claimed'; attempt: number }
  | { outcome: 'delivered'; remoteId: RemoteId }
  | { outcome: 'stale'; staleToken: string }
  | { outcome: 'held' | 'dead' | 'moved' | 'later' };

/** A chunk job's claim: refused by the gate, or each record's claim (`trial`: the gate's half-open verdict). */
export type ChunkClaimResult = ClaimRefused | { outcome: 'claims'; trial: boolean; records: ChunkClaim[] };

/** One record of a chunk to reserve: its key, content and its part of the chunk job's data. */
export interface ChunkReservation {
  orderKey: string;
  fingerprint?: Fingerprint;
  /** The record's entry in the chunk job's data (kept as JSON in the kept chunk job). */
  record: unknown;
}

/** The gate, asked, refused the attempt (the circuit breaker is open): nothing was claimed. */
export interface ClaimRefused {
  outcome: 'wait';
  /** When the gate expects to let attempts through again (ms since the epoch; 0: unknown). */
  retryAt: number;
}

/**
 * What a claim asks before it claims, when its caller passes one: the circuit breaker
 * (src/worker/circuitBreaker.ts, `gate()`). Folded into the claim script, so a worker that must
 * ask pays one round trip, not two. `lua` defines `admit(key)` returning a verdict (`go`, `trial`
 * or `wait`) and, for `wait`, when to ask again (ms). `key` must share the ledger's hash tag.
 * One gate per Redis client: its script is defined on the client at first use.
 */
export interface ClaimGate {
  key: string;
  lua: string;
}

export interface SettleInput {
  orderKey: string;
  batchId: string;
  token: string;
  state: 'delivered' | 'queued' | 'dead' | 'held';
  remoteId?: RemoteId;
  httpStatus?: number;
  code?: string;
  message?: string;
  /** The dead letter or held record (JSON), kept until resolved, purged or `parkedRetentionMs` old. */
  parkedRecord?: unknown;
  /** This attempt was answered 5xx after the request was sent (the server may have stored it). */
  answered5xx?: boolean;
}

export interface LedgerOptions {
  /** How long an entry outlives its last change; default 90 days. */
  retentionMs?: number;
  /**
   * How long a dead letter or held record (it holds personal data) is kept; default 30 days. The
   * ledger entry of a held order has no personal data and stays, still blocking a blind re-send.
   */
  parkedRetentionMs?: number;
  /**
   * A `queued` entry with no job behind it (an import died between reserving a chunk and adding
   * its jobs, a matter of milliseconds) is taken over by the next import after this long; default
   * 60 s, so a prompt rerun after a failure finishes the file.
   */
  staleQueuedMs?: number;
  /** `hold` (default): an order found `sending` is held for review; `resend`: at-least-once. */
  ambiguousPolicy?: 'hold' | 'resend';
  /** BullMQ queue name whose job hashes prove a `queued` entry is alive. */
  queueName: string;
}

const DAY = 24 * 60 * 60 * 1000;

interface LedgerCommands {
  bulkorderReserve(...args: (string | number)[]): Promise<string[]>;
  bulkorderConfirm(...args: (string | number)[]): Promise<number>;
  bulkorderDropStranded(...args: (string | number)[]): Promise<number>;
  bulkorderClaim(...args: (string | number)[]): Promise<[string, string, string]>;
  bulkorderGatedClaim(...args: (string | number)[]): Promise<[string, string, string]>;
  bulkorderSettle(...args: (string | number)[]): Promise<string>;
  bulkorderReserveChunk(...args: (string | number)[]): Promise<string[]>;
  bulkorderConfirmChunk(...args: (string | number)[]): Promise<number>;
  bulkorderClaimMany(...args: (string | number)[]): Promise<string[]>;
  bulkorderGatedClaimMany(...args: (string | number)[]): Promise<string[]>;
  bulkorderSettleMany(...args: (string | number)[]): Promise<string[]>;
  bulkorderRelease(...args: (string | number)[]): Promise<[string, string, string]>;
  bulkorderUnrelease(...args: (string | number)[]): Promise<number>;
  bulkorderResolve(...args: (string | number)[]): Promise<string>;
}

/**
 * The delivery ledger: the promise that an order is never sent twice. BullMQ forgets a
 * job id once the job is removed; the ledger remembers each order key for `retentionMs`
 * (per environment, through the keyspace prefix): `queued` when an import takes it,
 * `sending` before the POST, `delivered` with the API's answer after it.
 */
export class Ledger {
  readonly retentionMs: number;
  readonly parkedRetentionMs: number;
  readonly staleQueuedMs: number;
  readonly ambiguousPolicy: 'hold' | 'resend';
  private readonly redis: RedisClient & LedgerCommands;
  /** `<prefix>:<queue>:`: a job's hash is this and its id. */
  private readonly jobPrefix: string;

  constructor(redis: RedisClient, private readonly keys: Keyspace, private readonly options: LedgerOptions) {
    this.retentionMs = options.retentionMs ?? 90 * DAY;
    this.parkedRetentionMs = options.parkedRetentionMs ?? 30 * DAY;
    this.staleQueuedMs = options.staleQueuedMs ?? 60 * 1000;
    this.ambiguousPolicy = options.ambiguousPolicy ?? 'hold';
    defineLedgerCommands(redis);
    this.redis = redis as RedisClient & LedgerCommands;
    this.jobPrefix = keys.job(options.queueName, '');
  }

  /**
   * Reserves records for one batch in one round trip, each with its fingerprint and its job: the
   * job stays in the ledger until `confirmQueued`, so a crash between reserving and queueing
   * strands nothing (see `stranded`). Imports, `dead-letters retry` and the breaker's burst
   * requeue all reserve this way.
   */
  async reserveJobs(items: readonly Reservation[], batchId: string, force: boolean): Promise<ReserveResult[]> {
    if (items.length === 0) return [];
    const now = Date.now();
    const pipeline = this.redis.pipeline() as ChainableCommander & { bulkorderReserve(...args: (string | number)[]): unknown };
    for (const item of items) {
      pipeline.bulkorderReserve(
        this.keys.ledger(item.orderKey),
        this.keys.job(this.options.queueName, item.orderKey),
        this.keys.unqueued,
        this.keys.unqueuedJobs,
        this.keys.batch(batchId),
        batchId,
        now,
        this.retentionMs,
        force ? '1' : '0',
        this.staleQueuedMs,
        item.fingerprint?.hash ?? '',
        item.fingerprint?.parts ?? '',
        JSON.stringify(item.job),
        item.orderKey,
        item.alreadyCounted === true ? '1' : '0',
        this.jobPrefix,
      );
    }
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply]): ReserveResult => {
      if (error) throw error;
      return toReserveResult(reply as string[], 0);
    });
  }

  /**
   * Reserves chunks of records for one batch, each chunk into one job (`chunkIds[i]` its job id,
   * `job.name` its name, `job.layout` its packed payloads' layout), in one round trip: each record as
   * reserveJobs does, and each chunk's job, holding the records reserved, kept until `confirmChunks`.
   * Returns each record's result.
   */
  async reserveChunks(chunks: readonly (readonly ChunkReservation[])[], chunkIds: readonly string[], job: { name: string; layout: number | undefined }, batchId: string, force: boolean): Promise<ReserveResult[][]> {
    if (chunks.length === 0) return [];
    const now = Date.now();
    const pipeline = this.redis.pipeline() as ChainableCommander & { bulkorderReserveChunk(...args: (string | number)[]): unknown };
    // The kept job is chunkJob's JSON with the reserved records spliced in by the script.
    const { head, tail } = keptChunkFrame(job.name, batchId, job.layout);
    for (const [c, items] of chunks.entries()) {
      pipeline.bulkorderReserveChunk(
        3 + items.length,
        this.keys.unqueued,
        this.keys.unqueuedJobs,
        this.keys.batch(batchId),
        ...items.map((item) => this.keys.ledger(item.orderKey)),
        batchId,
        now,
        this.retentionMs,
        force ? '1' : '0',
        this.staleQueuedMs,
        this.jobPrefix,
        chunkIds[c]!,
        head,
        tail,
        chunkNumber(chunkIds[c]!, batchId),
        ...items.flatMap((item) => [item.orderKey, item.fingerprint?.hash ?? '', item.fingerprint?.parts ?? '', JSON.stringify(item.record)]),
      );
    }
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply], c) => {
      if (error) throw error;
      return chunks[c]!.map((_, i) => toReserveResult(reply as string[], 5 * i));
    });
  }

  /**
   * The chunk jobs are in BullMQ: drops their kept jobs and counts, once, each record still
   * reserved into its chunk by `batchId`. Returns how many this call counted.
   */
  async confirmChunks(chunks: readonly { chunkId: string; orderKeys: readonly string[] }[], batchId: string): Promise<number> {
    if (chunks.length === 0) return 0;
    const pipeline = this.redis.pipeline() as ChainableCommander & { bulkorderConfirmChunk(...args: (string | number)[]): unknown };
    for (const chunk of chunks) {
      pipeline.bulkorderConfirmChunk(3 + chunk.orderKeys.length, this.keys.batch(batchId), this.keys.unqueued, this.keys.unqueuedJobs, ...chunk.orderKeys.map((key) => this.keys.ledger(key)), batchId, chunk.chunkId, chunkNumber(chunk.chunkId, batchId));
    }
    const replies = (await pipeline.exec()) ?? [];
    return replies.reduce((sum, [error, reply]) => {
      if (error) throw error;
      return sum + Number(reply);
    }, 0);
  }

  /**
   * The jobs of these keys are in BullMQ: drops the kept jobs and counts each order once as
   * queued by `batchId` (not those reserved `alreadyCounted`). Returns how many this call counted.
   */
  async confirmQueued(orderKeys: readonly string[], batchId: string): Promise<number> {
    if (orderKeys.length === 0) return 0;
    const pipeline = this.redis.pipeline() as ChainableCommander & { bulkorderConfirm(...args: (string | number)[]): unknown };
    for (const key of orderKeys) pipeline.bulkorderConfirm(this.keys.ledger(key), this.keys.batch(batchId), this.keys.unqueued, this.keys.unqueuedJobs, batchId, key);
    const replies = (await pipeline.exec()) ?? [];
    return replies.reduce((sum, [error, reply]) => {
      if (error) throw error;
      return sum + Number(reply);
    }, 0);
  }

  /** Up to `limit` reservations made before `before` (ms) whose job is not known to be queued, oldest first. */
  async stranded(before: number, limit: number): Promise<StrandedEntry[]> {
    const orderKeys = await this.redis.zrangebyscore(this.keys.unqueued, '-inf', before, 'LIMIT', 0, limit);
    if (orderKeys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of orderKeys) {
      // `j`: a job kept in the entry itself (entries written before unqueuedJobs).
      pipeline.hmget(this.keys.ledger(key), 's', 'b', 'j');
      pipeline.hget(this.keys.unqueuedJobs, key);
      pipeline.exists(this.keys.job(this.options.queueName, key));
    }
    const replies = (await pipeline.exec()) ?? [];
    return orderKeys.map((orderKey, i) => {
      const [error, fields] = replies[3 * i]!;
      const [keptError, kept] = replies[3 * i + 1]!;
      const [jobError, exists] = replies[3 * i + 2]!;
      const failed = error ?? keptError ?? jobError;
      if (failed) throw failed;
      const [s, b, j] = fields as (string | null)[];
      const job = (kept as string | null) ?? j ?? undefined;
      const chunk = s === null && job !== undefined ? chunkOf(job) : undefined;
      // A chunk's job id has no entry of its own: the chunk stands for its records, queued by its batch.
      if (chunk !== undefined) return { orderKey, state: 'queued', batchId: chunk.batchId, job, jobExists: Number(exists) === 1, chunkKeys: chunk.keys };
      return { orderKey, state: (s ?? undefined) as LedgerState | undefined, batchId: b ?? '', job, jobExists: Number(exists) === 1 };
    });
  }

  /** Moves index members to the back of the `stranded` order (their importer is alive), or drops them (`score` undefined: nothing left to do). */
  async touchStranded(orderKeys: readonly string[], score: number | undefined): Promise<void> {
    if (orderKeys.length === 0) return;
    if (score === undefined) await this.redis.bulkorderDropStranded(2 + orderKeys.length, this.keys.unqueued, this.keys.unqueuedJobs, ...orderKeys.map((key) => this.keys.ledger(key)), ...orderKeys);
    else await this.redis.zadd(this.keys.unqueued, 'XX', ...orderKeys.flatMap((key) => [score, key]));
  }

  /**
   * Marks an order `sending` for this attempt, unless its state forbids sending it. With a
   * `gate`, the gate is asked first, in the same script: `wait` when it refuses.
   */
  async claim(orderKey: string, token: string, gate?: ClaimGate, chunkId = ''): Promise<ClaimResult> {
    const entry = this.keys.ledger(orderKey);
    const args = [token, Date.now(), this.retentionMs, this.ambiguousPolicy];
    let reply: [string, string, string];
    if (gate === undefined) reply = await this.redis.bulkorderClaim(entry, entry, ...args, '0', chunkId);
    else {
      const client: RedisClient = this.redis;
      if (!('bulkorderGatedClaim' in client)) client.defineCommand('bulkorderGatedClaim', { numberOfKeys: 2, lua: gate.lua + CLAIM });
      reply = await this.redis.bulkorderGatedClaim(entry, gate.key, ...args, '1', chunkId);
    }
    const [outcome, value, verdict] = reply;
    const trial = verdict === 'trial' ? { trial: true as const } : {};
    switch (outcome) {
      case 'wait':
        return { outcome, retryAt: Number(value) };
      case 'claimed':
        return { outcome, attempt: Number(value), ...trial };
      case 'delivered':
        return { outcome, remoteId: decodeRemoteId(value), ...trial };
      case 'held':
      case 'moved':
        return { outcome, ...trial };
      default:
        return { outcome: 'stale', staleToken: value, ...trial };
    }
  }

  /**
   * Claims the records of chunk job `chunkId` for one attempt of it, in one script: the gate (when
   * given) asked once, each record as `claim` would, except that a record dead-lettered by an
   * earlier attempt of the chunk is `dead`, and half-open only one record is claimed (a trial).
   */
  async claimMany(orderKeys: readonly string[], token: string, chunkId: string, gate?: ClaimGate): Promise<ChunkClaimResult> {
    const entries = orderKeys.map((key) => this.keys.ledger(key));
    const args = [token, Date.now(), this.retentionMs, this.ambiguousPolicy];
    let reply: string[];
    if (gate === undefined) reply = await this.redis.bulkorderClaimMany(1 + entries.length, entries[0] ?? this.keys.breaker, ...entries, ...args, '0', chunkId);
    else {
      const client: RedisClient = this.redis;
      if (!('bulkorderGatedClaimMany' in client)) client.defineCommand('bulkorderGatedClaimMany', { lua: gate.lua + CLAIM_MANY });
      reply = await this.redis.bulkorderGatedClaimMany(1 + entries.length, gate.key, ...entries, ...args, '1', chunkId);
    }
    if (reply[0] === 'wait') return { outcome: 'wait', retryAt: Number(reply[1]) };
    const records = orderKeys.map((_, i): ChunkClaim => {
      const outcome = reply[2 + 2 * i]!;
      const value = reply[3 + 2 * i] ?? '';
      if (outcome === 'claimed') return { outcome, attempt: Number(value) };
      if (outcome === 'delivered') return { outcome, remoteId: decodeRemoteId(value) };
      if (outcome === 'stale') return { outcome, staleToken: value };
      return { outcome: outcome as 'held' | 'dead' | 'moved' | 'later' };
    });
    return { outcome: 'claims', trial: reply[0] === 'trial', records };
  }

  /** Records how an attempt ended. `lost` means another attempt owns the order now. */
  async settle(input: SettleInput): Promise<SettleOutcome> {
    const k = this.keys;
    const [token, state, orderKey, remoteId, httpStatus, code, message, parked, answered5xx] = settleArgs(input);
    return (await this.redis.bulkorderSettle(
      k.ledger(input.orderKey),
      k.batch(input.batchId),
      k.parked('dead', input.orderKey),
      k.parkedIndex('dead'),
      k.parked('held', input.orderKey),
      k.parkedIndex('held'),
      token, state, Date.now(), this.retentionMs, orderKey, remoteId, httpStatus, code, message, parked, this.parkedRetentionMs, answered5xx,
    )) as SettleOutcome;
  }

  /** Records how several attempts ended (a chunk job's records) in one script; each batch counter is added once. */
  async settleMany(inputs: readonly SettleInput[]): Promise<SettleOutcome[]> {
    if (inputs.length === 0) return [];
    const k = this.keys;
    return (await this.redis.bulkorderSettleMany(
      2 + 4 * inputs.length,
      k.parkedIndex('dead'),
      k.parkedIndex('held'),
      ...inputs.flatMap((input) => [k.ledger(input.orderKey), k.batch(input.batchId), k.parked('dead', input.orderKey), k.parked('held', input.orderKey)]),
      Date.now(),
      this.retentionMs,
      this.parkedRetentionMs,
      ...inputs.flatMap(settleArgs),
    )) as SettleOutcome[];
  }

  /** Reads many entries in one round trip; `undefined` where the ledger has none. */
  async getMany(orderKeys: readonly string[]): Promise<(LedgerEntry | undefined)[]> {
    if (orderKeys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of orderKeys) pipeline.hgetall(this.keys.ledger(key));
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply]) => {
      if (error) throw error;
      return toEntry(reply as Record<string, string>);
    });
  }

  /** The claim token of the attempt now sending this order, if any. */
  async currentToken(orderKey: string): Promise<string | undefined> {
    // A delivered entry keeps an emptied token (SETTLE): '' is none.
    return (await this.redis.hget(this.keys.ledger(orderKey), 't')) || undefined;
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
  async release(orderKey: string, batchId: string, review: ReviewInput, job: Reservation['job']): Promise<ReleaseResult> {
    const k = this.keys;
    const [outcome, previousBatchId, record] = await this.redis.bulkorderRelease(
      k.ledger(orderKey), k.parked('held', orderKey), k.parkedIndex('held'), k.unqueued, k.unqueuedJobs,
      batchId, Date.now(), this.retentionMs, orderKey, review.by, review.note ?? '', JSON.stringify(job),
    );
    return outcome === 'released' ? { outcome, previousBatchId, record } : { outcome: 'not-held', state: outcome as LedgerState | 'missing' };
  }

  /** Puts a released order back on hold (its job could not be added); false if it moved on meanwhile. */
  async unrelease(orderKey: string, releasedBatchId: string, previousBatchId: string, record: string, parkedAt: number): Promise<boolean> {
    const k = this.keys;
    return (await this.redis.bulkorderUnrelease(
      k.ledger(orderKey), k.parked('held', orderKey), k.parkedIndex('held'), k.unqueued, k.unqueuedJobs,
      releasedBatchId, previousBatchId, Date.now(), this.retentionMs, orderKey, record, parkedAt,
      // The record keeps its first expiry: a failed release does not extend the personal data's life.
      Math.max(1, parkedAt + this.parkedRetentionMs - Date.now()),
    )) === 1;
  }

  /**
   * A person's `review resolve --delivered`: held -> delivered without sending, recorded as
   * theirs; the held batch counts it delivered. Returns `resolved` or the state that forbids it.
   */
  async resolveDelivered(orderKey: string, review: ReviewInput & { remoteId?: string }): Promise<'resolved' | LedgerState | 'missing'> {
    const k = this.keys;
    for (;;) {
      const batchId = (await this.redis.hget(k.ledger(orderKey), 'b')) ?? '';
      const outcome = await this.redis.bulkorderResolve(
        k.ledger(orderKey), k.batch(batchId), k.parked('held', orderKey), k.parkedIndex('held'),
        batchId, Date.now(), this.retentionMs, orderKey, review.remoteId ?? '', review.by, review.note ?? '',
      );
      if (outcome !== 'moved') return outcome as 'resolved' | LedgerState | 'missing';
    }
  }

  /** Drops parked records (a dead letter a person gave up on); the ledger entry stays as it is. Returns how many existed. */
  async purgeParked(kind: ParkedKind, orderKeys: readonly string[]): Promise<number> {
    if (orderKeys.length === 0) return 0;
    const multi = this.redis.multi();
    for (const key of orderKeys) multi.del(this.keys.parked(kind, key));
    multi.zrem(this.keys.parkedIndex(kind), ...orderKeys);
    const replies = (await multi.exec()) ?? [];
    return replies.slice(0, orderKeys.length).reduce((sum, [, n]) => sum + Number(n ?? 0), 0);
  }
}

/** How a settle ended: `lost` means another attempt owns the order now; `already`, it was delivered before. */
export type SettleOutcome = 'ok' | 'lost' | 'already';

/** One settle's per-record arguments, in the order SETTLE and SETTLE_MANY read them. */
function settleArgs(input: SettleInput): [string, string, string, string, string, string, string, string, string] {
  return [
    input.token,
    input.state,
    input.orderKey,
    input.remoteId === undefined ? '' : encodeRemoteId(input.remoteId),
    input.httpStatus === undefined ? '' : String(input.httpStatus),
    input.code ?? '',
    input.message ?? '',
    input.parkedRecord === undefined ? '' : JSON.stringify(input.parkedRecord),
    input.answered5xx === true ? '1' : '0',
  ];
}

/** The number of a chunk job of `batchId` (its id is `<batchId>.<number>`, src/queues.ts chunkJobId): what its records' entries keep. */
function chunkNumber(chunkId: string, batchId: string): string {
  const number = chunkId.startsWith(`${batchId}.`) ? chunkId.slice(batchId.length + 1) : '';
  if (number === '' || number.includes('.')) throw new Error(`chunk job id ${chunkId} is not <batch id>.<number> of batch ${batchId}`);
  return number;
}

/** A reserve reply (five values from `at`) as a ReserveResult. */
function toReserveResult(reply: readonly string[], at: number): ReserveResult {
  const [outcome, previousBatch = '', parts = '', when = '0', state = ''] = reply.slice(at, at + 5);
  if (outcome === 'reserved') return { outcome };
  if (outcome === 'conflict') return { outcome, batchId: previousBatch, parts, at: Number(when), state: state as LedgerState };
  return { outcome: outcome as 'delivered' | 'held' | 'queued', batchId: previousBatch };
}

/** The batch and record keys of a kept chunk job ({name, data: {batchId, records}} JSON); undefined for a job of one record. */
function chunkOf(job: string): { batchId: string; keys: string[] } | undefined {
  const data = (JSON.parse(job) as { data?: { batchId?: string; records?: { key: string }[] } }).data;
  return data?.records === undefined ? undefined : { batchId: data.batchId ?? '', keys: data.records.map((record) => record.key) };
}

/** The mark of a delivered order that an earlier attempt may have stored as well; undefined otherwise. */
export function possibleDuplicate(entry: LedgerEntry | undefined): string | undefined {
  return entry?.state === 'delivered' && (entry.answered5xx ?? 0) > 0 ? POSSIBLE_DUPLICATE : undefined;
}

/** The words of the mark, in results files and batch summaries. */
export const POSSIBLE_DUPLICATE = 'possible duplicate: an earlier attempt was answered 5xx';

function toEntry(raw: Record<string, string>): LedgerEntry | undefined {
  if (raw.s === undefined) return undefined;
  const entry: LedgerEntry = {
    state: raw.s as LedgerState,
    batchId: raw.b ?? '',
    attempts: Number(raw.a ?? 0),
    updatedAt: Number(raw.u ?? 0),
  };
  if (raw.r) entry.remoteId = decodeRemoteId(raw.r);
  if (raw.h) entry.httpStatus = Number(raw.h);
  if (raw.c) entry.code = raw.c;
  if (raw.m) entry.message = raw.m;
  if (raw.d) entry.deliveredAt = Number(raw.d);
  if (raw.f) entry.fingerprint = { hash: raw.f, parts: raw.fp ?? '' };
  if (raw.x) entry.answered5xx = Number(raw.x);
  if (raw.q) entry.chunkId = `${raw.b ?? ''}.${raw.q}`;
  if (raw.rv === 'released' || raw.rv === 'resolved') entry.review = { action: raw.rv, by: raw.rw ?? '', at: Number(raw.rt ?? 0), ...(raw.rn ? { note: raw.rn } : {}) };
  return entry;
}

function defineLedgerCommands(redis: RedisClient): void {
  if ('bulkorderReserve' in redis) return;
  redis.defineCommand('bulkorderReserve', { numberOfKeys: 5, lua: RESERVE });
  redis.defineCommand('bulkorderConfirm', { numberOfKeys: 4, lua: CONFIRM });
  // Its number of keys varies: the first argument gives it.
  redis.defineCommand('bulkorderDropStranded', { lua: DROP_STRANDED });
  redis.defineCommand('bulkorderClaim', { numberOfKeys: 2, lua: NO_GATE + CLAIM });
  redis.defineCommand('bulkorderSettle', { numberOfKeys: 6, lua: SETTLE });
  // Their number of keys varies with the chunk: the first argument gives it.
  redis.defineCommand('bulkorderReserveChunk', { lua: RESERVE_CHUNK });
  redis.defineCommand('bulkorderConfirmChunk', { lua: CONFIRM_CHUNK });
  redis.defineCommand('bulkorderClaimMany', { lua: NO_GATE + CLAIM_MANY });
  redis.defineCommand('bulkorderSettleMany', { lua: SETTLE_MANY });
  redis.defineCommand('bulkorderRelease', { numberOfKeys: 5, lua: RELEASE });
  redis.defineCommand('bulkorderUnrelease', { numberOfKeys: 5, lua: UNRELEASE });
  redis.defineCommand('bulkorderResolve', { numberOfKeys: 4, lua: RESOLVE });
}
