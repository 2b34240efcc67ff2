import type { Redis, ChainableCommander } from 'ioredis';
import type { Keyspace } from '../keyspace.js';
import { CLAIM, RESERVE, SETTLE } from './ledgerScripts.js';

/** State of an order key in the delivery ledger. */
export type LedgerState = 'queued' | 'sending' | 'delivered' | 'dead' | 'held';

/** One ledger entry as read back. */
export interface LedgerEntry {
  state: LedgerState;
  batchId: string;
  attempts: number;
  updatedAt: number;
  remoteId?: string;
  httpStatus?: number;
  code?: string;
  message?: string;
  deliveredAt?: number;
}

/** What an import learns when it reserves an order key. */
export type ReserveResult =
  | { outcome: 'reserved' }
  | { outcome: 'delivered' | 'held' | 'queued'; batchId: string };

/** What a worker learns when it claims an order before sending it. */
export type ClaimResult =
  | { outcome: 'claimed'; attempt: number }
  | { outcome: 'delivered'; remoteId: string }
  | { outcome: 'held' }
  /** The order is already `sending` under another claim: that attempt may or may not have reached the API. */
  | { outcome: 'stale'; staleToken: string };

export interface SettleInput {
  orderKey: string;
  batchId: string;
  token: string;
  state: 'delivered' | 'queued' | 'dead' | 'held';
  remoteId?: string;
  httpStatus?: number;
  code?: string;
  message?: string;
  /** The dead letter or held record (JSON), kept until resolved or purged. */
  parkedRecord?: unknown;
}

export interface LedgerOptions {
  /** How long an entry outlives its last change; default 90 days. */
  retentionMs?: number;
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
  bulkorderReserve(...args: (string | number)[]): Promise<[string, string]>;
  bulkorderClaim(...args: (string | number)[]): Promise<[string, string]>;
  bulkorderSettle(...args: (string | number)[]): Promise<string>;
}

/**
 * The delivery ledger: the promise that an order is never sent twice. BullMQ forgets a
 * job id once the job is removed; the ledger remembers each order key for `retentionMs`
 * (per environment, through the keyspace prefix): `queued` when an import takes it,
 * `sending` before the POST, `delivered` with the API's answer after it.
 */
export class Ledger {
  readonly retentionMs: number;
  readonly staleQueuedMs: number;
  readonly ambiguousPolicy: 'hold' | 'resend';
  private readonly redis: Redis & LedgerCommands;

  constructor(redis: Redis, private readonly keys: Keyspace, private readonly options: LedgerOptions) {
    this.retentionMs = options.retentionMs ?? 90 * DAY;
    this.staleQueuedMs = options.staleQueuedMs ?? 60 * 1000;
    this.ambiguousPolicy = options.ambiguousPolicy ?? 'hold';
    defineLedgerCommands(redis);
    this.redis = redis as Redis & LedgerCommands;
  }

  /** Reserves many keys for one batch in one round trip. */
  async reserveMany(orderKeys: readonly string[], batchId: string, force: boolean): Promise<ReserveResult[]> {
    if (orderKeys.length === 0) return [];
    const now = Date.now();
    const pipeline = this.redis.pipeline() as ChainableCommander & { bulkorderReserve(...args: (string | number)[]): unknown };
    for (const key of orderKeys) {
      pipeline.bulkorderReserve(
        this.keys.ledger(key),
        this.keys.job(this.options.queueName, key),
        batchId,
        now,
        this.retentionMs,
        force ? '1' : '0',
        this.staleQueuedMs,
      );
    }
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply]) => {
      if (error) throw error;
      const [outcome, previousBatch] = reply as [string, string];
      return outcome === 'reserved' ? { outcome } : { outcome: outcome as 'delivered' | 'held' | 'queued', batchId: previousBatch };
    });
  }

  /** Marks an order `sending` for this attempt, unless its state forbids sending it. */
  async claim(orderKey: string, token: string): Promise<ClaimResult> {
    const [outcome, value] = await this.redis.bulkorderClaim(this.keys.ledger(orderKey), token, Date.now(), this.retentionMs, this.ambiguousPolicy);
    switch (outcome) {
      case 'claimed':
        return { outcome, attempt: Number(value) };
      case 'delivered':
        return { outcome, remoteId: value };
      case 'held':
        return { outcome };
      default:
        return { outcome: 'stale', staleToken: value };
    }
  }

  /** Records how an attempt ended. `lost` means another attempt owns the order now. */
  async settle(input: SettleInput): Promise<'ok' | 'lost' | 'already'> {
    const k = this.keys;
    return (await this.redis.bulkorderSettle(
      k.ledger(input.orderKey),
      k.batch(input.batchId),
      k.parked('dead', input.orderKey),
      k.parkedIndex('dead'),
      k.parked('held', input.orderKey),
      k.parkedIndex('held'),
      input.token,
      input.state,
      Date.now(),
      this.retentionMs,
      input.orderKey,
      input.remoteId ?? '',
      input.httpStatus === undefined ? '' : String(input.httpStatus),
      input.code ?? '',
      input.message ?? '',
      input.parkedRecord === undefined ? '' : JSON.stringify(input.parkedRecord),
    )) as 'ok' | 'lost' | 'already';
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
    return (await this.redis.hget(this.keys.ledger(orderKey), 't')) ?? undefined;
  }

  async get(orderKey: string): Promise<LedgerEntry | undefined> {
    return (await this.getMany([orderKey]))[0];
  }
}

function toEntry(raw: Record<string, string>): LedgerEntry | undefined {
  if (raw.s === undefined) return undefined;
  const entry: LedgerEntry = {
    state: raw.s as LedgerState,
    batchId: raw.b ?? '',
    attempts: Number(raw.a ?? 0),
    updatedAt: Number(raw.u ?? 0),
  };
  if (raw.r) entry.remoteId = raw.r;
  if (raw.h) entry.httpStatus = Number(raw.h);
  if (raw.c) entry.code = raw.c;
  if (raw.m) entry.message = raw.m;
  if (raw.d) entry.deliveredAt = Number(raw.d);
  return entry;
}

function defineLedgerCommands(redis: Redis): void {
  if ('bulkorderReserve' in redis) return;
  redis.defineCommand('bulkorderReserve', { numberOfKeys: 2, lua: RESERVE });
  redis.defineCommand('bulkorderClaim', { numberOfKeys: 1, lua: CLAIM });
  redis.defineCommand('bulkorderSettle', { numberOfKeys: 6, lua: SETTLE });
}
