import { startImportHeartbeat } from '../batches/importHeartbeat.js';
import type { JobsOptions } from 'bullmq';
import type { ImportCounts } from '../batches/batchStore.js';
import { newBatchId } from '../importer/importFile.js';
import type { ImportDeps } from '../services.js';
import type { DeliveryJobData, ParkedRecord } from '../deliveryJob.js';
import { requeuedJobData } from '../ledger/jobData.js';
import type { ParkedItem } from './parkedStore.js';
import { originalRows } from '../kinds/originalRows.js';

/** What requeueing needs: the same ledger, queue, options and kind as an import (`services.pipeline(logger)`). */
export interface RequeueDeps extends Pick<
  ImportDeps<unknown>,
  'batches' | 'env' | 'logger' | 'jobOptions' | 'kind' | 'ledger'
> {
  /** Any kind's queue: a parked record goes back with the payload it was parked with. */
  queue: RequeueQueue;
}

/** The one queue call a requeue makes; every kind's BullMQ queue has it. */
export interface RequeueQueue {
  addBulk(
    jobs: { name: string; data: DeliveryJobData<ParkedRecord['payload']>; opts: JobsOptions }[],
  ): Promise<unknown>;
}

/** How the ledger answered for one order; `reserved` means its job must be added now. */
export type RequeueOutcome = 'reserved' | 'skippedDelivered' | 'skippedHeld' | 'skippedQueued';

/** One parked record to send again, with the job that sends it (kept in the ledger until confirmed queued). */
export interface RequeueItem {
  record: ParkedRecord;
  job: { name: string; data: DeliveryJobData<ParkedRecord['payload']> };
}

/** The ledger side of a requeue: dead letters reserve like an import, held orders are released. */
export interface RequeueStrategy {
  /** Shown as the batch's file in `bulkorder status`, e.g. `dead-letters retry`. */
  label: string;
  /** Each reserved record keeps its job in the ledger, like an import's reservation. */
  reserve(items: readonly RequeueItem[], batchId: string): Promise<RequeueOutcome[]>;
  /** Called for reserved orders whose job could not be added, so none is left queued without a job. */
  undo?(record: ParkedRecord, batchId: string): Promise<void>;
}

/** One batch a requeue made. */
export interface RequeueBatch {
  batchId: string;
  counts: ImportCounts;
}

const CHUNK = 500;

/**
 * Sends parked orders again as they are, as new batches, so `status` and `--wait` work for them:
 * each order is reserved through the ledger with its job kept, then added the way an import adds
 * it (job name, job options, job id = order key) and confirmed queued, so a crash in between is
 * finished by a worker's reconciler, as for an import. Orders of inputs with different columns go
 * into different batches, because a batch keeps one column list for exporting its dead letters.
 */
export async function requeueParked(
  items: readonly ParkedItem[],
  strategy: RequeueStrategy,
  deps: RequeueDeps,
): Promise<RequeueBatch[]> {
  const columnsOf = new Map<string, string[] | undefined>();
  const groups = new Map<string, { columns: readonly string[]; jobs: { record: ParkedRecord; cells: string[][] }[] }>();
  for (const { record } of items) {
    if (!columnsOf.has(record.batchId))
      columnsOf.set(record.batchId, (await deps.batches.get(record.batchId))?.columns);
    const original = originalRows(record, columnsOf.get(record.batchId), deps.kind.rebuildRows);
    const id = JSON.stringify(original.columns);
    let group = groups.get(id);
    if (group === undefined) groups.set(id, (group = { columns: original.columns, jobs: [] }));
    group.jobs.push({ record, cells: original.rows });
  }

  const made: RequeueBatch[] = [];
  for (const group of groups.values()) {
    const batchId = newBatchId();
    const log = deps.logger.child({ batchId, requeue: strategy.label });
    await deps.batches.create({
      id: batchId,
      file: strategy.label,
      sha256: '',
      env: deps.env,
      startedAt: Date.now(),
      columns: [...group.columns],
    });
    const heartbeat = startImportHeartbeat(deps.batches, batchId); // a live batch is not taken for an orphan
    const counts: ImportCounts = {
      rows: 0,
      orders: 0,
      valid: 0,
      rejected: 0,
      skippedDelivered: 0,
      skippedHeld: 0,
      skippedQueued: 0,
      conflicts: 0,
      skippedIdentical: 0,
      skippedResults: 0,
      enqueued: 0,
    };
    try {
      for (let start = 0; start < group.jobs.length; start += CHUNK) {
        const chunk = group.jobs.slice(start, start + CHUNK);
        const items = chunk.map(({ record, cells }): RequeueItem => ({
          record,
          job: { name: deps.kind.jobName, data: requeuedJobData(record, batchId, cells) },
        }));
        const outcomes = await strategy.reserve(items, batchId);
        const delta = { skippedDelivered: 0, skippedHeld: 0, skippedQueued: 0 };
        const jobs: { name: string; data: DeliveryJobData<ParkedRecord['payload']>; opts: JobsOptions }[] = [];
        outcomes.forEach((outcome, i) => {
          const { record, job } = items[i]!;
          if (outcome === 'reserved') jobs.push({ ...job, opts: { ...deps.jobOptions, jobId: record.key } });
          else delta[outcome]++;
        });
        try {
          if (jobs.length > 0) await deps.queue.addBulk(jobs);
        } catch (error) {
          for (const job of jobs)
            await strategy
              .undo?.(chunk.find((j) => j.record.key === job.data.key)!.record, batchId)
              .catch(() => undefined);
          throw error;
        }
        // The jobs are in BullMQ: the ledger drops the kept jobs and the batch counts them queued.
        counts.enqueued += await deps.ledger.confirmQueued(
          jobs.map((job) => job.data.key),
          batchId,
        );
        await deps.batches.addImportCounts(batchId, delta);
        for (const [field, by] of Object.entries(delta)) counts[field as keyof typeof delta] += by;
        counts.rows += chunk.reduce((sum, j) => sum + j.cells.length, 0);
        counts.orders += chunk.length;
        counts.valid += chunk.length;
      }
    } catch (error) {
      heartbeat.stop();
      await deps.batches.finishImport(batchId, 'failed', totals(counts)).catch(() => undefined);
      log.error({ err: error }, 'requeue stopped; run it again (nothing is queued twice)');
      throw error;
    }
    heartbeat.stop();
    await deps.batches.finishImport(batchId, 'imported', totals(counts));
    log.info({ counts }, 'parked orders queued again');
    made.push({ batchId, counts });
  }
  return made;
}

function totals(counts: ImportCounts): Pick<ImportCounts, 'rows' | 'orders' | 'valid' | 'rejected'> {
  return { rows: counts.rows, orders: counts.orders, valid: counts.valid, rejected: counts.rejected };
}
