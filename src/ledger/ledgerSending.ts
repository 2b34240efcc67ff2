/**
 * Claims left `sending` without a live job (its worker SIGKILLed and the job removed, finished or
 * lost): the sending index (keyspace `sending`, kept by claimMany.lua and settleMany.lua) names every
 * claim not settled yet; a claim older than a reconciler's limit whose job is gone or finished will
 * never be settled by anyone, so the reconciler holds it for review (src/importer/reconcileImports.ts).
 */
import type { LedgerScope } from './ledgerTypes.js';
import { defined } from '../errors.js';
import { flatPairs } from '../redis/flatPairs.js';

/** A claim whose job is no longer alive: nobody will settle it. */
export interface StuckClaim {
  orderKey: string;
  batchId: string;
  /** The claim's token (a settle must name it). */
  token: string;
  /** The job it was claimed by (`<batch>.<n>`, or the order key for an earlier release's job of one). */
  jobId: string;
  /** When it was claimed (ms, Redis's clock). */
  claimedAt: number;
  attempts: number;
  /** The job's hash was gone (removed, or finished and pruned); false: it is there, finished. */
  jobGone: boolean;
}

/**
 * Up to `limit` claims made before `before` (ms) whose job is gone or finished. Index members that
 * are no longer `sending` are dropped; those whose job is alive are moved to `now` (BullMQ's stalled
 * check gives such a job back, and its next attempt holds the record as stale), so a page is never
 * filled by them.
 */
export async function stuckSending(
  scope: LedgerScope,
  before: number,
  now: number,
  limit: number,
): Promise<StuckClaim[]> {
  const { redis, keys } = scope;
  const members = await redis.zrangebyscore(keys.sending, '-inf', before, 'WITHSCORES', 'LIMIT', 0, limit);
  if (members.length === 0) return [];
  const claims: { orderKey: string; claimedAt: number }[] = [];
  for (const [orderKey, score] of flatPairs(members)) claims.push({ orderKey, claimedAt: Number(score) });
  const read = redis.pipeline();
  for (const claim of claims) read.hmget(keys.ledger(claim.orderKey), 's', 't', 'b', 'q', 'a');
  const entries = ((await read.exec()) ?? []).map(([error, reply]) => {
    if (error) throw error;
    return reply as (string | null)[];
  });
  const gone: string[] = [];
  const sending: (StuckClaim & { index: number })[] = [];
  claims.forEach((claim, index) => {
    const [s, t, b, q, a] = defined(entries[index], 'the ledger read of a sending claim');
    if (s !== 'sending' || !t) {
      gone.push(claim.orderKey);
      return;
    }
    sending.push({
      index,
      orderKey: claim.orderKey,
      batchId: b ?? '',
      token: t,
      jobId: q ? `${b ?? ''}.${q}` : claim.orderKey,
      claimedAt: claim.claimedAt,
      attempts: Number(a ?? 0),
      jobGone: false,
    });
  });
  const jobs = redis.pipeline();
  for (const claim of sending) {
    jobs.exists(scope.jobPrefix + claim.jobId);
    jobs.hget(scope.jobPrefix + claim.jobId, 'finishedOn');
  }
  const replies = (await jobs.exec()) ?? [];
  const stuck: StuckClaim[] = [];
  const alive: string[] = [];
  sending.forEach((claim, i) => {
    const exists = Number(replies[2 * i]?.[1] ?? 0) === 1;
    const finishedOn = replies[2 * i + 1]?.[1];
    if (exists && (finishedOn === null || finishedOn === undefined || finishedOn === '')) {
      alive.push(claim.orderKey);
      return;
    }
    const { index: _index, ...rest } = claim;
    stuck.push({ ...rest, jobGone: !exists });
  });
  const tidy = redis.pipeline();
  if (gone.length > 0) tidy.zrem(keys.sending, ...gone);
  // XX: one settled meanwhile stays out.
  for (const key of alive) tidy.zadd(keys.sending, 'XX', now, key);
  if (gone.length > 0 || alive.length > 0) await tidy.exec();
  return stuck;
}
