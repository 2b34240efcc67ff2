import { startImportHeartbeat } from '../batches/importHeartbeat.js';
import type { JobsOptions } from 'bullmq';
import { noImportCounts, type ImportCounts } from '../batches/batchStore.js';
import { newBatchId } from '../importer/importFile.js';
import type { ImportDeps } from '../services.js';
import type { ChunkJobData, ParkedRecord } from '../deliveryJob.js';
import { requeuedChunk } from '../ledger/jobData.js';
import { requeueChunkId } from '../queues.js';
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
  addBulk(jobs: { name: string; data: ChunkJobData<ParkedRecord['payload']>; opts: JobsOptions }[]): Promise<unknown>;
}

/** How the ledger answered for one order; `reserved` means its job must be added now. */
export type RequeueOutcome = 'reserved' | 'skippedDelivered' | 'skippedHeld' | 'skippedQueued';

/** One parked record to send again, with the job that sends it, a chunk of one (kept in the ledger until confirmed queued). */
export interface RequeueItem {
  record: ParkedRecord;
  job: { id: string; name: string; data: ChunkJobData<ParkedRecord['payload']> };
}

/** The ledger side of a requeue: dead letters reserve like an import, held orders are released. */
export interface RequeueStrategy {
  /** Shown as the batch's file in `bulkorder status`, e.g. `dead-letters retry`. */
  label: string;
  /** Each reserved record keeps its job in the ledger, like an import's reservation. */
  reserve(items: readonly RequeueItem[], batchId: string): Promise<RequeueOutcome[]>;
  /** Called for reserved orders whose job could not be added, so none is left queued without a job. */
  undo?(record: ParkedRecord): Promise<void>;
}

/** One batch a requeue made. */
export interface RequeueBatch {
  batchId: string;
  counts: ImportCounts;
}

const CHUNK = 500;

/**
 * Sends parked orders again as they are, as new batches, so `status` and `--wait` work for them:
 * each order is reserved through the ledger into a chunk of one with its job kept, then added the
 * way an import adds it (job name, job options) and confirmed queued, so a crash in between is
 * finished by a worker's reconciler, as for an import. Orders of inputs with different columns go
 * into different batches, because a batch keeps one column list for exporting its dead letters.
 */
export async function requeueParked(
  items: readonly ParkedItem[],
  strategy: RequeueStrategy,
  deps: RequeueDeps,
): Promise<RequeueBatch[]> {
  const made: RequeueBatch[] = [];
  for (const group of (await groupByColumns(items, deps)).values())
    made.push(await requeueGroup(group, strategy, deps));
  return made;
}

/** Parked records whose inputs had the same columns: they go into one batch. */
interface ColumnGroup {
  columns: readonly string[];
  /** Each record with its source rows rebuilt in those columns. */
  jobs: { record: ParkedRecord; cells: string[][] }[];
}

/** Groups the records by their input's columns (their batch's, when it is still kept), in order of first appearance. */
async function groupByColumns(items: readonly ParkedItem[], deps: RequeueDeps): Promise<Map<string, ColumnGroup>> {
  const columnsOf = new Map<string, string[] | undefined>();
  const groups = new Map<string, ColumnGroup>();
  for (const { record } of items) {
    if (!columnsOf.has(record.batchId))
      columnsOf.set(record.batchId, (await deps.batches.get(record.batchId))?.columns);
    const original = originalRows(record, columnsOf.get(record.batchId), deps.kind.rebuildRows);
    const id = JSON.stringify(original.columns);
    let group = groups.get(id);
    if (group === undefined) groups.set(id, (group = { columns: original.columns, jobs: [] }));
    group.jobs.push({ record, cells: original.rows });
  }
  return groups;
}

/**
 * Requeues one group as a new batch, CHUNK records at a time; the batch is finished `imported`,
 * or `failed` (and the error thrown) when a chunk could not be queued.
 */
async function requeueGroup(group: ColumnGroup, strategy: RequeueStrategy, deps: RequeueDeps): Promise<RequeueBatch> {
  const batchId = newBatchId();
  const log = deps.logger.child({ batchId, requeue: strategy.label });
  await deps.batches.create({
    id: batchId,
    file: strategy.label,
    sha256: '',
    env: deps.env,
    columns: [...group.columns],
  });
  const heartbeat = startImportHeartbeat(deps.batches, batchId); // a live batch is not taken for an orphan
  const counts = noImportCounts();
  try {
    for (let start = 0; start < group.jobs.length; start += CHUNK) {
      const chunk = group.jobs.slice(start, start + CHUNK);
      await requeueChunk(chunk, { batchId, counts, strategy, deps });
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
  return { batchId, counts };
}

/** The batch a chunk is requeued into, with its running counts, and how it is requeued. */
interface ChunkTarget {
  batchId: string;
  /** Added to as the chunk is queued. */
  counts: ImportCounts;
  strategy: RequeueStrategy;
  deps: RequeueDeps;
}

/**
 * Reserves one chunk through the strategy, adds the jobs of the reserved records (undoing their
 * reservations if that fails), confirms them queued and counts the chunk in its batch.
 */
async function requeueChunk(chunk: ColumnGroup['jobs'], target: ChunkTarget): Promise<void> {
  const { batchId, counts, strategy, deps } = target;
  const items = chunk.map(({ record, cells }): RequeueItem => ({
    record,
    job: { id: requeueChunkId(batchId), name: deps.kind.jobName, data: requeuedChunk(record, batchId, cells) },
  }));
  const outcomes = await strategy.reserve(items, batchId);
  const delta = { skippedDelivered: 0, skippedHeld: 0, skippedQueued: 0 };
  const reserved = items.filter((_, i) => outcomes[i] === 'reserved');
  outcomes.forEach((outcome) => {
    if (outcome !== 'reserved') delta[outcome]++;
  });
  const jobs = reserved.map(({ job }) => ({
    name: job.name,
    data: job.data,
    opts: { ...deps.jobOptions, jobId: job.id },
  }));
  try {
    if (jobs.length > 0) await deps.queue.addBulk(jobs);
  } catch (error) {
    for (const { record } of reserved) await strategy.undo?.(record).catch(() => undefined);
    throw error;
  }
  // The jobs are in BullMQ: the ledger drops the kept jobs and the batch counts them queued.
  counts.enqueued += await deps.ledger.confirmChunks(
    reserved.map(({ record, job }) => ({ chunkId: job.id, orderKeys: [record.key] })),
    batchId,
  );
  await deps.batches.addImportCounts(batchId, delta);
  for (const [field, by] of Object.entries(delta)) counts[field as keyof typeof delta] += by;
  counts.rows += chunk.reduce((sum, j) => sum + j.cells.length, 0);
  counts.orders += chunk.length;
  counts.valid += chunk.length;
}

function totals(counts: ImportCounts): Pick<ImportCounts, 'rows' | 'orders' | 'valid' | 'rejected'> {
  return { rows: counts.rows, orders: counts.orders, valid: counts.valid, rejected: counts.rejected };
}
