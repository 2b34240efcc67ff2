import type { JobsOptions, Queue } from 'bullmq';
import type { BatchStore } from '../batches/batchStore.js';
import type { Ledger, StrandedEntry } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';

export interface ReconcileDeps {
  ledger: Ledger;
  batches: BatchStore;
  /** The queue whose jobs the ledger keeps (orders, or employee accounts). */
  queue: Queue;
  /** Options of every delivery job (attempts, backoff, retention). */
  jobOptions: JobsOptions;
  logger: Logger;
}

export interface ReconcileReport {
  /** Orders whose job was added from the ledger (their importer died before queueing them); a chunk job counts its orders. */
  requeued: number;
  /** Orders found queued after all (their importer died before recording it). */
  confirmed: number;
  /** Batches closed as interrupted. */
  closed: string[];
}

/** Reservations younger than this are left alone even when their importer looks dead. */
const GRACE_MS = 2_000;
const PAGE = 500;

/**
 * Finishes what dead importers started. A reservation keeps its job in the ledger until the job
 * is known to be in BullMQ; here, every such reservation whose importer no longer beats gets its
 * job (added again by its id, the order key or the chunk's: BullMQ ignores an id it has, and a job
 * that finds its order delivered, or queued in another job, sends nothing) and is counted by its
 * batch; then the batches of dead importers are closed as `interrupted`, so they settle on
 * everything they reserved. Workers run this every few seconds and `import` at start; any number
 * may run at once.
 */
export async function reconcileImports(deps: ReconcileDeps, now = Date.now()): Promise<ReconcileReport> {
  const report: ReconcileReport = { requeued: 0, confirmed: 0, closed: [] };
  const seen = new Set<string>();
  for (;;) {
    const page = (await deps.ledger.stranded(now - GRACE_MS, PAGE)).filter((entry) => !seen.has(entry.orderKey));
    if (page.length === 0) break;
    for (const entry of page) seen.add(entry.orderKey);
    const alive = await deps.batches.ownersAlive(page.map((entry) => entry.batchId));
    const live = page.filter((entry) => alive.get(entry.batchId) === true);
    // Their importer is still working (or between reserving and confirming): look again later.
    await deps.ledger.touchStranded(
      live.map((entry) => entry.orderKey),
      Date.now(),
    );
    const orphaned = page.filter((entry) => alive.get(entry.batchId) !== true);
    const gone = orphaned.filter((entry) => entry.state === undefined || entry.job === undefined);
    await deps.ledger.touchStranded(
      gone.map((entry) => entry.orderKey),
      undefined,
    );
    const toAdd = orphaned.filter((entry) => entry.state === 'queued' && entry.job !== undefined && !entry.jobExists);
    if (toAdd.length > 0) await deps.queue.addBulk(toAdd.map((entry) => jobOf(entry, deps.jobOptions)));
    for (const [batchId, entries] of groupByBatch(
      orphaned.filter((entry) => entry.state !== undefined && entry.job !== undefined),
    )) {
      const singles = entries.filter((entry) => entry.chunkKeys === undefined);
      const chunks = entries.filter((entry) => entry.chunkKeys !== undefined);
      const counted =
        (await deps.ledger.confirmQueued(
          singles.map((entry) => entry.orderKey),
          batchId,
        )) +
        (await deps.ledger.confirmChunks(
          chunks.map((entry) => ({ chunkId: entry.orderKey, orderKeys: entry.chunkKeys! })),
          batchId,
        ));
      const added = entries
        .filter((entry) => toAdd.includes(entry))
        .reduce((sum, entry) => sum + (entry.chunkKeys?.length ?? 1), 0);
      report.requeued += added;
      report.confirmed += Math.max(0, counted - added);
    }
    if (page.length < PAGE) break;
  }
  report.closed = await deps.batches.closeOrphaned();
  if (report.requeued > 0 || report.confirmed > 0 || report.closed.length > 0) {
    deps.logger.warn(
      report,
      'finished the work of an importer that stopped: reserved orders queued, its batch closed as interrupted',
    );
  }
  return report;
}

/**
 * Runs `reconcileImports` every `everyMs` until stopped (workers). A failure (Redis away) is
 * logged and tried again at the next tick.
 */
export function startReconciler(deps: ReconcileDeps, everyMs = 5_000): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    reconcileImports(deps)
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'reconciling imports failed; trying again'))
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function jobOf(entry: StrandedEntry, jobOptions: JobsOptions): { name: string; data: unknown; opts: JobsOptions } {
  const job = JSON.parse(entry.job!) as { name: string; data: unknown };
  return { name: job.name, data: job.data, opts: { ...jobOptions, jobId: entry.orderKey } };
}

function groupByBatch(entries: readonly StrandedEntry[]): Map<string, StrandedEntry[]> {
  const groups = new Map<string, StrandedEntry[]>();
  for (const entry of entries) {
    const group = groups.get(entry.batchId) ?? [];
    group.push(entry);
    groups.set(entry.batchId, group);
  }
  return groups;
}
