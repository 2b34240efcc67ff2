import type { Redis } from 'ioredis';
import { isSettled, type BatchStore } from '../batches/batchStore.js';
import type { ParkedStore } from '../deadLetter/parkedStore.js';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import { batchNotice } from './batchNotice.js';
import type { Notifier } from './notifier.js';

export interface BatchWatchOptions {
  redis: Redis;
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
 * Announces each batch once when it settles. Any number of workers may run this: the batch
 * record's `notifiedAt` field (HSETNX) lets exactly one of them send. Job ends are coalesced
 * per batch, so a busy worker checks a batch at most a few times a second.
 */
export function startBatchWatch(options: BatchWatchOptions): { jobEnded(batchId: string): void; close(): void } {
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const check = async (batchId: string): Promise<void> => {
    const batch = await options.batches.get(batchId);
    if (batch === undefined || !isSettled(batch) || Date.now() - batch.startedAt > RECENT_MS) return;
    if ((await options.redis.hsetnx(options.keys.batch(batchId), 'notifiedAt', Date.now())) !== 1) return;
    const event = await batchNotice(batch, options.parked, options.dashboardUrl === undefined ? {} : { dashboardUrl: options.dashboardUrl });
    await options.notifier.notify(event);
  };
  const flush = (): void => {
    timer = undefined;
    const ids = [...pending];
    pending.clear();
    for (const id of ids) void check(id).catch((error: unknown) => options.logger.warn({ batchId: id, err: error }, 'could not check whether the batch settled'));
  };
  const sweep = setInterval(() => {
    void options.batches.list(20).then(
      (batches) => batches.forEach((b) => pending.add(b.id)),
      () => undefined,
    ).then(flush);
  }, options.sweepMs ?? 15_000);
  sweep.unref();
  return {
    jobEnded(batchId) {
      if (closed) return;
      pending.add(batchId);
      timer ??= setTimeout(flush, 250);
    },
    close() {
      closed = true;
      clearInterval(sweep);
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
