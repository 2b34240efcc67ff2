/**
 * The transitions a person makes (bulkorder review, dead-letters): release-5.lua, unrelease-5.lua,
 * resolve-4.lua, and dropping parked records. The Ledger class's methods of the same names call these.
 */
import type { ParkedKind } from '../keyspace.js';
import { argv } from '../lua/scriptArgv.js';
import type { LedgerScope, LedgerState, ReleaseResult, Reservation, ReviewInput } from './ledgerTypes.js';

/** Ledger.release: held -> queued in `batchId`, the held record removed, `job` kept until confirmed. */
export async function release(
  scope: LedgerScope,
  orderKey: string,
  batchId: string,
  review: ReviewInput,
  job: Reservation['job'],
): Promise<ReleaseResult> {
  const k = scope.keys;
  const [outcome, previousBatchId, record] = await scope.redis.bulkorderRelease(
    k.ledger(orderKey),
    k.parked('held', orderKey),
    k.parkedIndex('held'),
    k.unqueued,
    k.unqueuedJobs,
    ...argv('release', {
      newBatch: batchId,
      now: Date.now(),
      retentionMs: scope.retentionMs,
      orderKey,
      who: review.by,
      note: review.note ?? '',
      jobJson: JSON.stringify(job),
    }),
  );
  return outcome === 'released' ? { outcome, previousBatchId, record } : { outcome: 'not-held', state: outcome };
}

/** Ledger.unrelease: back on hold (its job could not be added); false if it moved on meanwhile. */
export async function unrelease(
  scope: LedgerScope,
  orderKey: string,
  releasedBatchId: string,
  previousBatchId: string,
  record: string,
  parkedAt: number,
): Promise<boolean> {
  const k = scope.keys;
  const now = Date.now();
  const put = await scope.redis.bulkorderUnrelease(
    k.ledger(orderKey),
    k.parked('held', orderKey),
    k.parkedIndex('held'),
    k.unqueued,
    k.unqueuedJobs,
    ...argv('unrelease', {
      releasedBatch: releasedBatchId,
      previousBatch: previousBatchId,
      now,
      retentionMs: scope.retentionMs,
      orderKey,
      recordJson: record,
      score: parkedAt,
      // The record keeps its first expiry: a failed release does not extend the personal data's life.
      recordTtlMs: Math.max(1, parkedAt + scope.parkedRetentionMs - now),
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
        now: Date.now(),
        retentionMs: scope.retentionMs,
        orderKey,
        remoteId: review.remoteId ?? '',
        who: review.by,
        note: review.note ?? '',
      }),
    );
    // `moved`: the entry changed batch between the read and the script: read again.
    if (outcome !== 'moved') return outcome;
  }
}

/** Ledger.purgeParked: drops parked records; the ledger entry stays as it is. Returns how many existed. */
export async function purgeParked(scope: LedgerScope, kind: ParkedKind, orderKeys: readonly string[]): Promise<number> {
  if (orderKeys.length === 0) return 0;
  const multi = scope.redis.multi();
  for (const key of orderKeys) multi.del(scope.keys.parked(kind, key));
  multi.zrem(scope.keys.parkedIndex(kind), ...orderKeys);
  const replies = (await multi.exec()) ?? [];
  return replies.slice(0, orderKeys.length).reduce((sum, [, n]) => sum + Number(n ?? 0), 0);
}
