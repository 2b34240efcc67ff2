import type { JobsOptions, Queue } from 'bullmq';
import type { BatchStore } from '../batches/batchStore.js';
import { parkedRecord, recordOfChunk, type DeliveryRecord, type PayloadCodec } from '../deliveryJob.js';
import { readJob, type QueuedJobData, type ReadJob } from '../ledger/jobData.js';
import type { StuckClaim } from '../ledger/ledgerSending.js';
import type { Ledger, StrandedEntry } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import { defined, JobDataError } from '../errors.js';

export interface ReconcileDeps {
  ledger: Ledger;
  batches: BatchStore;
  /** The queue whose jobs the ledger keeps (orders, or employee accounts). */
  queue: Queue;
  /** Options of every delivery job (attempts, backoff, retention). */
  jobOptions: JobsOptions;
  logger: Logger;
  /**
   * A claim (`sending`) older than this whose job is gone or finished is held for review
   * (OUTCOME_UNKNOWN: it may have reached the API); default STUCK_SENDING_MS (30 s).
   */
  stuckSendingMs?: number;
  /** The kind's packed-payload codec, so a claim held from a finished job keeps the record its job carried. */
  codec?: PayloadCodec<unknown> | undefined;
}

export interface ReconcileReport {
  /** Orders whose job was added from the ledger (their importer died before queueing them); a chunk job counts its orders. */
  requeued: number;
  /** Orders found queued after all (their importer died before recording it). */
  confirmed: number;
  /** Batches closed as interrupted. */
  closed: string[];
  /** Orders left `sending` without a live job, held for review (they may have been sent). */
  held: number;
}

/** Default of ReconcileDeps.stuckSendingMs: a worker's reconciler (every 5 s) finds such a claim well within a minute. */
export const STUCK_SENDING_MS = 30_000;

/** Reservations younger than this are left alone even when their importer looks dead. */
const GRACE_MS = 2_000;
const PAGE = 500;

/**
 * Finishes what dead importers started. A reservation keeps its job in the ledger until the job
 * is known to be in BullMQ; here, every such reservation whose importer no longer beats gets its
 * job (added again by its id, the chunk's, or an earlier release's job of one's order key: BullMQ
 * ignores an id it has, and a job that finds its order delivered, or queued in another job, sends
 * nothing) and is counted by its batch; then the batches of dead importers are closed as `interrupted`, so they settle on
 * everything they reserved. Workers run this every few seconds and `import` at start; any number
 * may run at once.
 */
export async function reconcileImports(deps: ReconcileDeps, at?: number): Promise<ReconcileReport> {
  // Redis's clock: reservations are stamped with it (reserveChunk.lua), whichever host made them.
  const now = at ?? (await deps.ledger.now());
  const report: ReconcileReport = { requeued: 0, confirmed: 0, closed: [], held: 0 };
  const seen = new Set<string>();
  for (;;) {
    const page = (await deps.ledger.stranded(now - GRACE_MS, PAGE)).filter((entry) => !seen.has(entry.jobId));
    if (page.length === 0) break;
    for (const entry of page) seen.add(entry.jobId);
    const alive = await deps.batches.ownersAlive(page.map((entry) => entry.batchId));
    const live = page.filter((entry) => alive.get(entry.batchId) === true);
    // Their importer is still working (or between reserving and confirming): look again later.
    await deps.ledger.touchStranded(
      live.map((entry) => entry.jobId),
      await deps.ledger.now(),
    );
    const orphaned = page.filter((entry) => alive.get(entry.batchId) !== true);
    const gone = orphaned.filter((entry) => entry.state === undefined || entry.job === undefined);
    await deps.ledger.touchStranded(
      gone.map((entry) => entry.jobId),
      undefined,
    );
    const toAdd = orphaned.filter((entry) => entry.state === 'queued' && entry.job !== undefined && !entry.jobExists);
    if (toAdd.length > 0) await deps.queue.addBulk(toAdd.map((entry) => jobOf(entry, deps.jobOptions)));
    for (const [batchId, entries] of groupByBatch(
      orphaned.filter((entry) => entry.state !== undefined && entry.job !== undefined),
    )) {
      const counted = await deps.ledger.confirmChunks(
        entries.map((entry) => ({ chunkId: entry.jobId, orderKeys: entry.chunkKeys })),
        batchId,
      );
      const added = entries
        .filter((entry) => toAdd.includes(entry))
        .reduce((sum, entry) => sum + entry.chunkKeys.length, 0);
      report.requeued += added;
      report.confirmed += Math.max(0, counted - added);
    }
    if (page.length < PAGE) break;
  }
  report.held = await holdStuckClaims(deps, now);
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
 * Holds for review every claim left `sending` whose job is gone or finished (its worker SIGKILLed and
 * the job removed, a job finished without settling it): nobody else would ever settle it, and its
 * batch would wait for ever. It may have reached the API, so it is never requeued blindly (nothing
 * proves it unsent): held as OUTCOME_UNKNOWN, its batch counts it held and settles. Returns how many.
 */
async function holdStuckClaims(deps: ReconcileDeps, now: number): Promise<number> {
  const before = now - (deps.stuckSendingMs ?? STUCK_SENDING_MS);
  let held = 0;
  for (let page = 0; page < 20; page += 1) {
    const stuck = await deps.ledger.stuckSending(before, now, PAGE);
    if (stuck.length === 0) break;
    const files = new Map<string, string>();
    for (const claim of stuck)
      if (!files.has(claim.batchId)) files.set(claim.batchId, (await deps.batches.get(claim.batchId))?.file ?? '');
    // The claims of one chunk share its job: read (and unpacked) once per page, not once per claim.
    const jobs = new Map<string, Promise<ReadJob<unknown> | undefined>>();
    const recordOf = async (claim: StuckClaim): Promise<DeliveryRecord<unknown> | undefined> => {
      if (claim.jobGone) return undefined;
      let read = jobs.get(claim.jobId);
      if (read === undefined) jobs.set(claim.jobId, (read = readStuckJob(deps, claim.jobId)));
      const job = await read;
      const record = job?.chunk.records.find((candidate) => candidate.key === claim.orderKey);
      return job === undefined || record === undefined ? undefined : recordOfChunk(job.chunk, record);
    };
    const outcomes = await deps.ledger.settleMany(
      await Promise.all(
        stuck.map(async (claim) => {
          const message = `left \`sending\` since ${new Date(claim.claimedAt).toISOString()} by job ${claim.jobId}, which ${claim.jobGone ? 'is gone' : 'finished without settling it'} (its worker stopped mid-send)`;
          const reason = `It may or may not have reached the API: ${message}.`;
          const record = (await recordOf(claim)) ?? {
            key: claim.orderKey,
            batchId: claim.batchId,
            lines: [],
            payload: null,
          };
          return {
            orderKey: claim.orderKey,
            batchId: claim.batchId,
            token: claim.token,
            state: 'held' as const,
            code: 'OUTCOME_UNKNOWN',
            message,
            parkedRecord: {
              ...parkedRecord(record, files.get(claim.batchId) ?? '', {
                kind: 'held',
                facts: {
                  // Without the record its job carried there is nothing to send again: the row must come back.
                  reason:
                    record.payload === null
                      ? `${reason} Its job was gone, so nothing of it was kept to send again: check the service; resolve it as delivered if it is there, else import its row again under a new orderRef (this key stays held).`
                      : `${reason} Check the service: resolve it if it is there, release it if it is not.`,
                  code: 'OUTCOME_UNKNOWN',
                  message,
                },
                attempts: claim.attempts,
              }),
              parkedAt: now, // Redis's clock, as every time the reconciler compares
            },
          };
        }),
      ),
    );
    const done = outcomes.filter((outcome) => outcome === 'ok').length;
    held += done;
    if (done > 0)
      deps.logger.warn(
        { code: 'OUTCOME_UNKNOWN', held: done, orderKeys: stuck.slice(0, 20).map((claim) => claim.orderKey) },
        'orders left `sending` without a live job: held for review (they may have reached the API)',
      );
    if (stuck.length < PAGE) break;
  }
  return held;
}

/** A stuck claim's finished job, read; undefined when it is gone meanwhile or cannot be read. */
async function readStuckJob(deps: ReconcileDeps, jobId: string): Promise<ReadJob<unknown> | undefined> {
  const job = await deps.queue.getJob(jobId);
  if (job === undefined) return undefined;
  try {
    return readJob(job.data as QueuedJobData<unknown>, jobId, deps.codec);
  } catch (error) {
    if (error instanceof JobDataError) return undefined;
    throw error;
  }
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
  const job = JSON.parse(defined(entry.job, 'the stranded job')) as { name: string; data: unknown };
  return { name: job.name, data: job.data, opts: { ...jobOptions, jobId: entry.jobId } };
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

/** reconcileImports over an import's open stores, as `import` and the drop folder run it (at start and after). */
export function reconcilerFor(stores: Omit<ReconcileDeps, 'logger'>, logger: Logger): () => Promise<ReconcileReport> {
  return () =>
    reconcileImports({
      ledger: stores.ledger,
      batches: stores.batches,
      queue: stores.queue,
      jobOptions: stores.jobOptions,
      logger,
      codec: stores.codec,
    });
}
