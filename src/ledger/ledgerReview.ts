/**
 * The transitions a person makes (bulkorder review, dead-letters): release-5.lua, unrelease-5.lua,
 * resolve-4.lua, and dropping parked records. The Ledger class's methods of the same names call these.
 */
import type { ParkedKind } from '../keyspace.js';
import { argv } from '../lua/scriptArgv.js';
import type { ReleaseKeys } from '../lua/scriptCommands.js';
import type { KeptJob, LedgerScope, LedgerState, Released, ReleaseResult, ReviewInput } from './ledgerTypes.js';
import { chunkNumber } from './ledgerReserve.js';
import { REDIS_TIME } from '../redis/redisClock.js';

/** The KEYS of release-5 and unrelease-5 for one order: the one undoes the other, so both name the same keys. */
function releaseKeys(scope: LedgerScope, orderKey: string): ReleaseKeys {
  const k = scope.keys;
  return [k.ledger(orderKey), k.parked('held', orderKey), k.parkedIndex('held'), k.unqueued, k.unqueuedJobs];
}

/** Ledger.release: held -> queued in `batchId` in chunk `job.id`, the held record removed, `job` kept until confirmed. */
export async function release(
  scope: LedgerScope,
  orderKey: string,
  into: { batchId: string; review: ReviewInput; job: KeptJob },
): Promise<ReleaseResult> {
  const { batchId, review, job } = into;
  const k = scope.keys;
  const [outcome, previousBatchId, record] = await scope.redis.bulkorderRelease(
    ...releaseKeys(scope, orderKey),
    ...argv('release', {
      newBatch: batchId,
      now: REDIS_TIME,
      retentionMs: scope.retentionMs,
      orderKey,
      who: review.by,
      note: review.note ?? '',
      jobJson: JSON.stringify({ name: job.name, data: job.data }),
      chunkId: job.id,
      chunkNumber: chunkNumber(job.id, batchId),
      prefix: k.prefix,
    }),
  );
  return outcome === 'released' ? { outcome, previousBatchId, record } : { outcome: 'not-held', state: outcome };
}

/** Ledger.unrelease: back on hold (its job could not be added); false if it moved on meanwhile. */
export async function unrelease(scope: LedgerScope, orderKey: string, released: Released): Promise<boolean> {
  const { releasedBatchId, previousBatchId, record, parkedAt } = released;
  const k = scope.keys;
  const now = Date.now();
  const put = await scope.redis.bulkorderUnrelease(
    ...releaseKeys(scope, orderKey),
    ...argv('unrelease', {
      releasedBatch: releasedBatchId,
      previousBatch: previousBatchId,
      now: REDIS_TIME,
      retentionMs: scope.retentionMs,
      orderKey,
      recordJson: record,
      score: parkedAt,
      // The record keeps its first expiry: a failed release does not extend the personal data's life.
      recordTtlMs: Math.max(1, parkedAt + scope.parkedRetentionMs - now),
      chunkId: released.chunkId,
      prefix: k.prefix,
    }),
  );
  return put === 1;
}

/** Ledger.resolveDelivered: held -> delivered without sending; `resolved` or the state that forbids it. */
export async function resolveDelivered(
  scope: LedgerScope,
  orderKey: string,
  review: ReviewInput & { remoteId?: string },
): Promise<'resolved' | LedgerState | 'missing'> {
  const k = scope.keys;
  for (;;) {
    const batchId = (await scope.redis.hget(k.ledger(orderKey), 'b')) ?? '';
    const outcome = await scope.redis.bulkorderResolve(
      k.ledger(orderKey),
      k.batch(batchId),
      k.parked('held', orderKey),
      k.parkedIndex('held'),
      ...argv('resolve', {
        expectedBatch: batchId,
        now: REDIS_TIME,
        retentionMs: scope.retentionMs,
        orderKey,
        remoteId: review.remoteId ?? '',
        who: review.by,
        note: review.note ?? '',
        prefix: k.prefix,
      }),
    );
    // `moved`: the entry changed batch between the read and the script: read again.
    if (outcome !== 'moved') return outcome;
  }
}

/**
 * Ledger.purgeParked: drops parked records (purgeParked.lua); the ledger entry stays as it is, and the batch each
 * was parked in stops counting it open (dead or held -> resolved, a `purged` fix in its history, who and why when
 * given). Returns how many existed.
 */
export async function purgeParked(
  scope: LedgerScope,
  kind: ParkedKind,
  orderKeys: readonly string[],
  decided: { by?: string; note?: string } = {},
): Promise<number> {
  if (orderKeys.length === 0) return 0;
  const k = scope.keys;
  let purged = 0;
  // A few hundred per call: one script must not hold Redis for long.
  for (let i = 0; i < orderKeys.length; i += 500) {
    const part = orderKeys.slice(i, i + 500);
    purged += await scope.redis.bulkorderPurgeParked(
      1 + part.length,
      k.parkedIndex(kind),
      ...part.map((key) => k.parked(kind, key)),
      REDIS_TIME,
      k.prefix,
      kind,
      decided.by ?? '',
      decided.note ?? '',
      ...part,
    );
  }
  return purged;
}
