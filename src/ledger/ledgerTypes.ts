import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { RemoteId } from '../delivery/remoteId.js';
import type { Fingerprint } from './fingerprint.js';

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
  /** The chunk job it is queued in (`<b>.<q>`); absent: an earlier release's job of one, the key as its id. */
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

/** A job the ledger keeps until it is confirmed queued (a release's chunk of one). */
export interface KeptJob {
  /** Its job id: the chunk's (`<batch>.<number>`). */
  id: string;
  name: string;
  data: unknown;
}

/** What `unrelease` puts back: the release it undoes, as `release` answered it. */
export interface Released {
  releasedBatchId: string;
  previousBatchId: string;
  /** The held record `release` removed (JSON). */
  record: string;
  /** When it was parked (ms): its place in the review list and its expiry. */
  parkedAt: number;
  /** The chunk `release` kept the job under. */
  chunkId: string;
}

/** What `release` found: released (with the held record it removed) or the state that forbids it. */
export type ReleaseResult =
  | { outcome: 'released'; previousBatchId: string; record: string }
  | { outcome: 'not-held'; state: LedgerState | 'missing' };

/** What an import learns when it reserves an order key. */
export type ReserveResult =
  | { outcome: 'reserved' }
  | { outcome: 'delivered' | 'held' | 'queued'; batchId: string }
  /** Dead-lettered before with the same content (an unchanged re-run): not sent again unless --retry-refused. */
  | { outcome: 'refused'; batchId: string }
  /** The key is delivered, held or in flight with other content (a reused orderRef). */
  | { outcome: 'conflict'; batchId: string; parts: string; at: number; state: LedgerState };

/** A reservation whose job may never have reached BullMQ, as a reconciler finds it. */
export interface StrandedEntry {
  /** The kept job's id: a chunk job's (`<batch>.<number>`), or an earlier release's job of one record (its key). */
  jobId: string;
  /** Undefined when the entry expired (only its index member is left); a chunk job's is `queued`. */
  state: LedgerState | undefined;
  batchId: string;
  /** The kept job ({name, data} JSON); undefined once confirmed. */
  job: string | undefined;
  jobExists: boolean;
  /** The keys of the records it holds. */
  chunkKeys: string[];
}

/**
 * What one record of a chunk job is, as its job's claim finds it: `claimed` (marked `sending` for
 * this attempt), `delivered`, `held` or `dead` (by an earlier attempt of the chunk), `stale` (already
 * `sending` under another claim: that attempt may or may not have reached the API), `moved` (queued
 * in another job now: a dead letter sent again, a released held order), `later` (not claimed: the
 * gate let one trial through, and another record of the chunk is it) or `vanished` (its entry is
 * gone while its job runs: Redis evicted or lost it; never sent, REDIS_KEYS_VANISHED).
 */
export type ChunkClaim =
  | { outcome: 'claimed'; attempt: number }
  | { outcome: 'delivered'; remoteId: RemoteId }
  | { outcome: 'stale'; staleToken: string }
  | { outcome: 'held' | 'dead' | 'moved' | 'later' | 'vanished' };

/** A chunk job's claim: refused by the gate, or each record's claim (`trial`: the gate's half-open verdict). */
export type ChunkClaimResult = ClaimRefused | { outcome: 'claims'; trial: boolean; records: ChunkClaim[] };

/** What reserving chunks keeps of their jobs until they are confirmed queued, and how the batch counts them. */
export interface ChunkJobs {
  /** The jobs' name (RecordKind.jobName). */
  name: string;
  /** The layout of their packed payloads (PayloadCodec.version). */
  layout: number | undefined;
  /** Their records' file, when not the batch's own (a requeue's). */
  file?: string;
  /**
   * The batch counted these records as queued before (the breaker's burst goes back into its own
   * batch): confirming the chunk does not count them twice, and a dead letter of that batch stops
   * counting as dead in the same step.
   */
  alreadyCounted?: boolean;
}

/** How Ledger.reserveChunks reserves: for which batch, and whether a refused key is sent again. */
export interface ReserveChunksOptions {
  /** The batch the records are reserved for. */
  batchId: string;
  /** Send a key dead-lettered with the same content again (`--force`). Default false. */
  force?: boolean;
  /** Send a refused key again (`--retry-refused`): like `force`, for refused keys only. Default false. */
  retryRefused?: boolean;
}

/** Ledger.reserveChunks's whole request: the chunks, their job ids and jobs, and its options. */
export interface ReserveChunksRequest extends ReserveChunksOptions {
  /** The chunks, each chunk's records into one job. */
  chunks: readonly (readonly ChunkReservation[])[];
  /** Each chunk's job id (`chunkIds[i]` for `chunks[i]`). */
  chunkIds: readonly string[];
  /** What the jobs are: name, packed layout, file. */
  jobs: ChunkJobs;
}

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
 * What a claim asks before it claims, when its caller passes one: the circuit breaker's state
 * (src/worker/circuitBreaker.ts, `gate()`), judged by the breaker's `admit` inside the claim
 * script (src/lua/includes/admit.lua), so a worker that must ask pays one round trip, not two.
 * `key` must share the ledger's hash tag.
 */
export interface ClaimGate {
  key: string;
  /**
   * Whom the claimed records are for (one per record, '' unknown): half-open, the trial goes to a
   * customer the refusals that opened the breaker never named (admit.lua). Omitted: any record.
   */
  customers?: readonly string[];
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

/** How a settle ended: `lost` means another attempt owns the order now; `already`, it was delivered before. */
export type SettleOutcome = 'ok' | 'lost' | 'already';

/** What every part of the ledger works with: the client (its scripts defined), keys and settings. */
export interface LedgerScope {
  readonly redis: RedisClient;
  readonly keys: Keyspace;
  readonly retentionMs: number;
  readonly parkedRetentionMs: number;
  readonly staleQueuedMs: number;
  readonly ambiguousPolicy: 'hold' | 'resend';
  readonly queueName: string;
  /** `<prefix>:<queue>:`: a job's hash is this and its id. */
  readonly jobPrefix: string;
}
