import { randomBytes } from 'node:crypto';
import { basename, resolve } from 'node:path';
import type { JobsOptions } from 'bullmq';
import type { ImportCounts, ImportFailure } from '../batches/batchStore.js';
import { startImportHeartbeat } from '../batches/importHeartbeat.js';
import { ExitCode, InfrastructureError, isBulkorderError } from '../errors.js';
import type { ReserveResult } from '../ledger/ledger.js';
import { fingerprintOf } from '../ledger/fingerprint.js';
import type { ChunkJobData } from '../deliveryJob.js';
import { chunkJob, toChunkRecord, toJobData } from '../ledger/jobData.js';
import { chunkJobId } from '../queues.js';
import type { IngestOptions, RecordSource } from '../ingest/openRecordSource.js';
import type { RecordItem, ValidRecord } from '../ingest/types.js';
import type { ImportDeps } from '../services.js';
import { limitRejections, withRejectionLimit } from '../ingest/rejectionLimit.js';
import { RejectsWriter } from '../ingest/rejectsWriter.js';
import { refuseNul, scanFile } from '../ingest/scanFile.js';
import { outputPath } from '../ingest/outputPath.js';
import { ValidationSummary } from '../ingest/validationSummary.js';
import { conflictRejection } from '../ledger/orderRefReused.js';
import type { PriorResults } from '../batches/priorResults.js';

export interface ImportOptions extends IngestOptions {
  /** Send orders again even when the ledger knows them as delivered. */
  force?: boolean;
  /** Where rejected rows go; default `<name>.rejects.csv` beside the input. */
  rejectsPath?: string;
  /** Orders per reserve + addBulk round; default 500. */
  chunkSize?: number;
  /**
   * An earlier results file of this input (issue 26: a second ledger): orders it records as
   * delivered that the ledger does not know are not sent (`skippedResults`). Ignored with `force`.
   */
  priorResults?: PriorResults;
  /** Called once the batch exists, before anything of it is reserved (the import journal is written here). */
  onBatchCreated?: (batchId: string) => Promise<void>;
  /**
   * Keep the records read, in file order, while there are at most this many (`ImportResult.items`),
   * so the results file is written without reading and validating the file again (import --wait);
   * a longer file keeps none (memory stays flat) and is read again. Default 0: none kept.
   */
  keepItems?: number;
}

export interface ImportResult<P = unknown> {
  batchId: string;
  counts: ImportCounts;
  summary: ValidationSummary;
  rejectsPath: string | undefined;
  /** Keys this file shares with orders another batch has queued or in flight: that batch delivers them; `--wait` follows them. */
  elsewhere: { orderKey: string; batchId: string }[];
  /** Start lines of orders without orderRef skipped as identical to one delivered before (the first 20). */
  identicalLines: number[];
  /** Every record read, in file order, when there were at most `keepItems` of them. */
  items?: RecordItem<P>[];
}

/**
 * Streams a file through validation into its queue (orders, or employee accounts with the
 * accounts' deps). Each chunk of valid records is first reserved in the ledger with its
 * fingerprint and its job (skipping orders already delivered, held, or queued by another batch
 * with the same content; a key known with other content is a conflict, ORDER_REF_REUSED, written
 * to the rejects file), then added with `addBulk`, then confirmed (the ledger drops the kept job and
 * the batch counts the order). With `ordersPerJob` above 1, every that many records of a chunk go in
 * one job (`chunkJobId(batchId, n)` its id), reserved and confirmed together; with 1, each record is
 * a job of its own with its key as job id. A crash anywhere in between strands
 * nothing: a reconciler (src/importer/reconcileImports.ts) adds the kept jobs of an importer that
 * stopped beating. The next chunk is read only when one is done, so memory stays flat and Redis
 * sets the pace. Rejected rows go to the rejects file exactly as `validate` writes them.
 */
export async function importFile<P>(
  file: string,
  options: ImportOptions,
  deps: ImportDeps<P>,
): Promise<ImportResult<P>> {
  // Refuses a bad file before anything is created; a mostly wrong one early in its first read.
  const source = await deps.kind.openSource(file, withRejectionLimit(options));
  const scan = await scanFile(file);
  refuseNul(file, scan); // before the batch exists: nothing of a damaged file is queued
  const sha256 = scan.sha256;
  const batchId = newBatchId();
  const log = deps.logger.child({ batchId, file: basename(file) });
  const rejectsPath = options.rejectsPath ?? RejectsWriter.defaultPath(file);
  // Absolute, so a dashboard started in another folder finds them (results: the default of import --wait).
  const outputs = { rejectsFile: resolve(rejectsPath), resultsFile: resolve(outputPath(file, 'results')) };
  await deps.batches.create({
    id: batchId,
    file,
    sha256,
    env: deps.env,
    startedAt: Date.now(),
    columns: source.columns,
    ...outputs,
  });
  const heartbeat = startImportHeartbeat(deps.batches, batchId);
  try {
    await options.onBatchCreated?.(batchId);
  } catch (error) {
    heartbeat.stop();
    await deps.batches.finishImport(batchId, 'failed', totalsOf(source), importFailure(error)).catch(() => undefined);
    throw error;
  }

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
  const elsewhere: ImportResult['elsewhere'] = [];
  const keepItems = options.keepItems ?? 0;
  let items: RecordItem<P>[] | undefined = keepItems > 0 ? [] : undefined;
  const identicalLines: number[] = [];
  const summary = new ValidationSummary(10, deps.kind.noun);
  const rejects = new RejectsWriter(rejectsPath, source.columns, { delimiter: source.delimiter });
  const chunkSize = options.chunkSize ?? 500;
  let chunk: ValidRecord<P>[] = [];

  const perJob = deps.ordersPerJob ?? 1;
  let chunksQueued = 0;

  // Each record in a job of its own, the order key as job id.
  const queueSingly = async (orders: ValidRecord<P>[]): Promise<{ results: ReserveResult[]; enqueued: number }> => {
    const jobs = orders.map((order) => ({
      name: deps.kind.jobName,
      data: toJobData(order, batchId, source.columns, deps.kind, file),
      opts: { ...deps.jobOptions, jobId: order.key },
    }));
    const results = await deps.ledger.reserveJobs(
      orders.map((order, i) => ({
        orderKey: order.key,
        fingerprint: fingerprintOf(order.payload),
        job: { name: jobs[i]!.name, data: jobs[i]!.data },
      })),
      batchId,
      options.force === true,
    );
    const toAdd = jobs.filter((_, i) => results[i]!.outcome === 'reserved');
    if (toAdd.length > 0) await deps.queue.addBulk(toAdd);
    return {
      results,
      enqueued: await deps.ledger.confirmQueued(
        toAdd.map((job) => job.data.key),
        batchId,
      ),
    };
  };

  // `perJob` records to a job (chunkJobId as its id): each chunk job holds the records its reservation took.
  const queueChunks = async (orders: ValidRecord<P>[]): Promise<{ results: ReserveResult[]; enqueued: number }> => {
    const groups: ValidRecord<P>[][] = [];
    for (let i = 0; i < orders.length; i += perJob) groups.push(orders.slice(i, i + perJob));
    const ids = groups.map(() => chunkJobId(batchId, ++chunksQueued));
    const records = groups.map((group) => group.map((order) => toChunkRecord(order, source.columns, deps.kind)));
    const reserved = await deps.ledger.reserveChunks(
      groups.map((group, c) =>
        group.map((order, i) => ({
          orderKey: order.key,
          fingerprint: fingerprintOf(order.payload),
          record: records[c]![i],
        })),
      ),
      ids,
      { name: deps.kind.chunkJobName, layout: deps.kind.payloadCodec?.version },
      batchId,
      options.force === true,
    );
    const toAdd: { name: string; data: ChunkJobData<P>; opts: JobsOptions }[] = [];
    for (const [c, group] of records.entries()) {
      const taken = group.filter((_, i) => reserved[c]![i]!.outcome === 'reserved');
      // The same data as the job the ledger keeps (reserveChunk.lua, through keptChunkFrame): the records taken.
      if (taken.length > 0)
        toAdd.push({
          name: deps.kind.chunkJobName,
          data: chunkJob(batchId, taken, deps.kind.payloadCodec?.version),
          opts: { ...deps.jobOptions, jobId: ids[c]! },
        });
    }
    if (toAdd.length > 0) await deps.queue.addBulk(toAdd);
    const enqueued = await deps.ledger.confirmChunks(
      toAdd.map((job) => ({ chunkId: job.opts.jobId!, orderKeys: job.data.records.map((record) => record.key) })),
      batchId,
    );
    return { results: reserved.flat(), enqueued };
  };

  // The results file is asked only about orders the ledger does not know: the ledger stays the first authority.
  const prior = options.force === true ? undefined : options.priorResults;
  const dropDeliveredByResults = async (orders: ValidRecord<P>[]): Promise<Set<string>> => {
    const named = prior === undefined ? [] : orders.filter((order) => prior.delivered.has(order.key));
    if (named.length === 0) return new Set();
    const entries = await deps.ledger.getMany(named.map((order) => order.key));
    return new Set(named.filter((_, i) => entries[i] === undefined).map((order) => order.key));
  };

  const flush = async (): Promise<void> => {
    if (heartbeat.lost) {
      throw new InfrastructureError(
        'IMPORT_INTERRUPTED',
        `Redis did not hear from this import for a while, so batch ${batchId} was closed as interrupted and its reserved orders queued; run the same command again to finish the file (nothing is sent twice).`,
      );
    }
    const taken = chunk;
    chunk = [];
    const skippedResults = await dropDeliveredByResults(taken);
    const orders = skippedResults.size === 0 ? taken : taken.filter((order) => !skippedResults.has(order.key));
    const { results, enqueued } =
      orders.length === 0
        ? { results: [], enqueued: 0 }
        : perJob > 1
          ? await queueChunks(orders)
          : await queueSingly(orders);
    counts.enqueued += enqueued;
    const delta = {
      skippedDelivered: 0,
      skippedHeld: 0,
      skippedQueued: 0,
      conflicts: 0,
      skippedIdentical: 0,
      skippedResults: skippedResults.size,
    };
    for (const [i, result] of results.entries()) {
      const order = orders[i]!;
      if (result.outcome === 'delivered') {
        delta.skippedDelivered++;
        if (order.orderRef === undefined) {
          delta.skippedIdentical++;
          if (identicalLines.length < 20) identicalLines.push(order.lines[0]!);
        }
      } else if (result.outcome === 'held') delta.skippedHeld++;
      else if (result.outcome === 'queued') {
        delta.skippedQueued++;
        elsewhere.push({ orderKey: order.key, batchId: result.batchId });
      } else if (result.outcome === 'conflict') {
        delta.conflicts++;
        await rejects.write(conflictRejection(order, result, fingerprintOf(order.payload)));
      }
    }
    await deps.batches.addImportCounts(batchId, delta);
    for (const [field, by] of Object.entries(delta)) counts[field as keyof typeof delta] += by;
  };

  // Look-ahead: one chunk is reserved and queued while the next is read and validated, so the
  // parser's CPU and Redis's round trips overlap. Chunks still go to Redis one at a time, in order.
  let inFlight: Promise<void> = Promise.resolve();
  const flushAhead = async (): Promise<void> => {
    await inFlight;
    inFlight = flush();
    inFlight.catch(() => undefined); // observed by the next await; not an unhandled rejection meanwhile
  };
  try {
    // The first 10,000 rows are judged before the first chunk is reserved: a mostly wrong file queues nothing.
    for await (const item of limitRejections(source.items(), file, options.maxRejectedPercent)) {
      summary.add(item);
      if (items !== undefined) items = items.length < keepItems ? (items.push(item), items) : undefined;
      if (item.kind === 'rejected') {
        await rejects.write(item);
        continue;
      }
      chunk.push(item);
      if (chunk.length >= chunkSize) await flushAhead();
    }
    if (chunk.length > 0) await flushAhead();
    await inFlight;
    await rejects.close();
  } catch (error) {
    await inFlight.catch(() => undefined);
    heartbeat.stop();
    await rejects.abort().catch(() => undefined);
    await deps.batches.finishImport(batchId, 'failed', totalsOf(source), importFailure(error)).catch(() => undefined);
    log.error({ err: error }, 'import stopped; run it again to finish (nothing is queued twice)');
    throw error;
  }
  heartbeat.stop();
  Object.assign(counts, totalsOf(source));
  await deps.batches.finishImport(batchId, 'imported', totalsOf(source));
  log.info({ counts }, 'file imported');
  return {
    batchId,
    counts,
    summary,
    rejectsPath: rejects.rowsWritten > 0 ? rejects.path : undefined,
    elsewhere,
    identicalLines,
    ...(items === undefined ? {} : { items }),
  };
}

/** Sortable and unique: `b-20261122T021500-1a2b3c`. */
export function newBatchId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');
  return `b-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** A source's counts under the batch counters' names (a batch calls its records `orders`). */
function totalsOf(source: RecordSource<unknown>): Pick<ImportCounts, 'rows' | 'orders' | 'valid' | 'rejected'> {
  const { rows, records, valid, rejected } = source.stats();
  return { rows, orders: records, valid, rejected };
}

/** Why an import stopped, as its batch keeps it: a refused file is exit 3 with its code, anything else its own. */
function importFailure(error: unknown): ImportFailure {
  if (isBulkorderError(error)) return { code: error.code, reason: error.message, exitCode: error.exitCode };
  return {
    code: 'INTERNAL',
    reason: error instanceof Error ? error.message : String(error),
    exitCode: ExitCode.internal,
  };
}
