import type { RedisClient } from '../redis.js';
import { isSettled, type Batch, type BatchStore } from '../batches/batchStore.js';
import type { ParkedStore } from '../deadLetter/parkedStore.js';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import { batchNotice, deliveryNeedsAttention, recoveredNotice, resolvedNotice } from './batchNotice.js';
import { claimEvent, notifyWatermark } from './eventClaims.js';
import type { Notifier } from './notifier.js';
import type { NotifyEvent } from './notifyEvent.js';
import { redisTime } from '../redis/redisClock.js';

export interface BatchWatchOptions {
  redis: RedisClient;
  keys: Keyspace;
  batches: BatchStore;
  /** Dead letters and held orders of the same kind, for the top error codes. */
  parked: readonly ParkedStore[];
  notifier: Notifier;
  logger: Logger;
  dashboardUrl?: string;
  /** How often recent batches are looked at besides job ends (a batch whose last order ended before its import finished); default 15 s. */
  sweepMs?: number;
}

/** Batches started longer ago than this are never announced (a worker started on an old keyspace stays quiet). */
const RECENT_MS = 24 * 3600 * 1000;

/**
 * Batch fields: `notifiedAs` the event sent when it settled (a later `batch-recovered` needs a
 * `batch-needs-attention` first); `notifyWatched` set when a notifier saw it unsettled, so a batch
 * started before the watermark but settling after it is still announced.
 */
const NOTIFIED_AS = 'notifiedAs';
const WATCHED = 'notifyWatched';
/** `notifiedAs` of a batch announced for its dead-lettered or held orders: the one that may recover. */
const DELIVERY_ATTENTION = 'batch-needs-attention:delivery';

/**
 * Announces each batch once when it settles, and once more if it needed attention for its orders
 * and none is open any more: `batch-resolved` when a person's fixes closed them, `batch-recovered`
 * when they all ended delivered by themselves (either `resolves` the needs-attention event, once). Only batches that settle after the
 * watermark (eventClaims.ts) are announced; any number of workers may run this: each event's id
 * is claimed in Redis before it is sent. Job ends are coalesced per batch, so a busy worker
 * checks a batch at most a few times a second.
 */
export function startBatchWatch(options: BatchWatchOptions): { jobEnded(batchId: string): void; close(): void } {
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const notice = options.dashboardUrl === undefined ? {} : { dashboardUrl: options.dashboardUrl };
  const send = async (batch: Batch, event: NotifyEvent): Promise<void> => {
    if (!(await claimEvent(options.redis, options.keys, event.id))) return;
    // Only dead or held orders can recover; rejected rows stay rejected.
    const as =
      event.event === 'batch-needs-attention' && deliveryNeedsAttention(batch) ? DELIVERY_ATTENTION : event.event;
    await options.redis.hset(options.keys.batch(batch.id), NOTIFIED_AS, as);
    await options.notifier.notify(event);
  };
  const check = async (batchId: string, from: number): Promise<void> => {
    const batch = await options.batches.get(batchId);
    // Redis's clock, as the batch's start and the watermark: a host's may be minutes off.
    const now = await redisTime(options.redis);
    if (batch === undefined || now - batch.startedAt > RECENT_MS) return;
    const key = options.keys.batch(batchId);
    if (!isSettled(batch)) {
      if (batch.startedAt < from) await options.redis.hsetnx(key, WATCHED, now);
      return;
    }
    const [announced, watched, legacy] = await options.redis.hmget(key, NOTIFIED_AS, WATCHED, 'notifiedAt');
    if (announced === null) {
      // Settled before any notifier saw it, and before the watermark: an old event, never replayed.
      if (legacy !== null || (batch.startedAt < from && watched === null)) return;
      await send(batch, await batchNotice(batch, options.parked, notice));
    } else if (announced === DELIVERY_ATTENTION && closedByFixes(batch)) {
      await send(batch, resolvedNotice(batch, notice));
    } else if (announced === DELIVERY_ATTENTION && recovered(batch)) {
      await send(batch, recoveredNotice(batch, notice));
    }
  };
  const flush = async (): Promise<void> => {
    timer = undefined;
    const ids = [...pending];
    pending.clear();
    if (ids.length === 0) return;
    const from = await notifyWatermark(options.redis, options.keys);
    await Promise.all(
      ids.map((id) =>
        check(id, from).catch((error: unknown) =>
          options.logger.warn({ batchId: id, err: error }, 'could not check whether the batch settled'),
        ),
      ),
    );
  };
  const sweepOnce = (): void => {
    void options.batches
      .list(20)
      .then(
        (batches) => batches.forEach((b) => pending.add(b.id)),
        () => undefined,
      )
      .then(flush)
      .catch((error: unknown) =>
        options.logger.warn({ err: error }, 'could not look at recent batches for notifications'),
      );
  };
  // At start: the watermark is set (or kept) and batches in flight are marked seen before they settle.
  sweepOnce();
  const sweep = setInterval(sweepOnce, options.sweepMs ?? 15_000);
  sweep.unref();
  return {
    jobEnded(batchId) {
      if (closed) return;
      pending.add(batchId);
      timer ??= setTimeout(() => void flush().catch(() => undefined), 250);
    },
    close() {
      closed = true;
      clearInterval(sweep);
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/** Nothing dead or held any more, some of it closed by a person's fix (retried, superseded, released, resolved, passed on). */
function closedByFixes(batch: Batch): boolean {
  return isSettled(batch) && !deliveryNeedsAttention(batch) && batch.resolved + batch.movedOn > 0;
}

/** Every queued order delivered after all (none dead or held any more), the import itself complete. */
function recovered(batch: Batch): boolean {
  return isSettled(batch) && batch.importState !== 'failed' && !deliveryNeedsAttention(batch) && batch.delivered > 0;
}
