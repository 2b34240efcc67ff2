import { randomBytes } from 'node:crypto';
import { basename, resolve } from 'node:path';
import type { JobsOptions } from 'bullmq';
import { noImportCounts, noSkips, type ImportCounts, type ImportFailure } from '../batches/batchStore.js';
import { startImportHeartbeat, type ImportHeartbeat } from '../batches/importHeartbeat.js';
import { defined, ExitCode, InfrastructureError, isBulkorderError } from '../errors.js';
import type { ReserveResult } from '../ledger/ledger.js';
import { fingerprintOf } from '../ledger/fingerprint.js';
import type { ChunkJobData, StoredChunkRecord } from '../deliveryJob.js';
import { chunkJob, toChunkRecord } from '../ledger/jobData.js';
import { chunkJobId } from '../queues.js';
import type { IngestOptions, RecordSource } from '../ingest/openRecordSource.js';
import type { RejectedRecord, ValidRecord } from '../ingest/types.js';
import { replacedKey } from '../ingest/replacedKey.js';
import { KeptItems } from './keptItems.js';
import type { ImportDeps } from '../services.js';
import { limitRejectionBatches, withRejectionLimit } from '../ingest/rejectionLimit.js';
import { RejectsWriter } from '../ingest/rejectsWriter.js';
import { refuseNul } from '../ingest/scanFile.js';
import { inputDialect, outputDialect, type CsvDialect } from '../ingest/csvDialect.js';
import { ValidationSummary } from '../ingest/validationSummary.js';
import { conflictRejection } from '../ledger/orderRefReused.js';
import type { PriorResults } from '../batches/priorResults.js';
import { assertUnchanged, fileIdentity, type FileIdentity } from './fileIdentity.js';
import type { Logger } from '../logger.js';

/** Orders in the first reserve + addBulk round of an import; each next round doubles, up to its chunk size. */
const FIRST_CHUNK = 50;
/** Chunks being reserved and queued at once while the file is read on. */
const FLUSHES_IN_FLIGHT = 2;

export interface ImportOptions extends IngestOptions {
  /** Send orders again even when the ledger knows them as delivered. */
  force?: boolean;
  /**
   * Send orders again that were dead-lettered before with the same content (an unchanged re-run after the
   * cause was fixed on the service). Default: not sent, counted `skippedRefused`, listed in `refusedBefore`.
   */
  retryRefused?: boolean;
  /** Where rejected rows go; default `<name>.rejects.csv` beside the input. */
  rejectsPath?: string;
  /** Orders per reserve + addBulk round, at most; default 500. The first rounds are smaller (FIRST_CHUNK, doubling). */
  chunkSize?: number;
  /**
   * An earlier results file of this input (issue 26: a second ledger): orders it records as
   * delivered that the ledger does not know are not sent (`skippedResults`). Ignored with `force`.
   */
  priorResults?: PriorResults;
  /** Called once the batch exists, before anything of it is reserved (the import journal is written here). */
  onBatchCreated?: (batchId: string) => Promise<void>;
  /**
   * Keep the records read, in the order read (`ImportResult.kept`), so the results file is written without
   * reading and validating the file again (import --wait): up to this many in memory, those of a longer file
   * in a temp file (KeptItems). Default 0: none kept.
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
  /** Orders refused before with the same content, not sent again: their keys and the batch of their dead letter (the first 20). */
  refusedBefore: { orderKey: string; batchId: string }[];
  /** Every record read, in the order read, with `keepItems`; the caller disposes of it. */
  kept?: KeptItems<P>;
}

/**
 * Streams a file through validation into its queue (orders, or employee accounts with the
 * accounts' deps). Each chunk of valid records is first reserved in the ledger with its
 * fingerprint and its job (skipping orders already delivered, held, or queued by another batch
 * with the same content; a key known with other content is a conflict, ORDER_REF_REUSED, written
 * to the rejects file), then added with `addBulk`, then confirmed (the ledger drops the kept job and
 * the batch counts the order). Every `ordersPerJob` records (default 1) of a chunk go in one job
 * (`chunkJobId(batchId, n)` its id), reserved and confirmed together. A crash anywhere in between strands
 * nothing: a reconciler (src/importer/reconcileImports.ts) adds the kept jobs of an importer that
 * stopped beating. The next chunk is read only when one is done, so memory stays flat and Redis
 * sets the pace. Rejected rows go to the rejects file exactly as `validate` writes them.
 */
export async function importFile<P>(
  file: string,
  options: ImportOptions,
  deps: ImportDeps<P>,
): Promise<ImportResult<P>> {
  if (deps.tracing === undefined) return importUntraced(file, options, deps);
  // The batch's trace: its chunk jobs carry this span's context through the queue (BullMQ telemetry).
  return deps.tracing.span(`bulkorder.import`, { 'bulkorder.kind': deps.kind.noun }, async (span) => {
    const result = await importUntraced(
      file,
      {
        ...options,
        onBatchCreated: async (batchId) => {
          span.set({ 'bulkorder.batch_id': batchId });
          await options.onBatchCreated?.(batchId);
        },
      },
      deps,
    );
    const { rows, orders, rejected, enqueued } = result.counts;
    span.set({
      'bulkorder.rows': rows,
      'bulkorder.orders': orders,
      'bulkorder.rejected': rejected,
      'bulkorder.enqueued': enqueued,
    });
    return result;
  });
}

/** A Redis step run again through a cluster failover when the deps can (each step is safe to repeat). */
type Ride = <T>(step: () => Promise<T>) => Promise<T>;

/** A batch just created for a file that passed its scan, its heartbeat beating: what every later step reads. */
interface OpenedBatch<P> {
  file: string;
  options: ImportOptions;
  deps: ImportDeps<P>;
  source: RecordSource<P>;
  /** What the file was before its first byte was read: the import refuses it whole if it changes (FILE_CHANGED_WHILE_READ). */
  identity: FileIdentity;
  batchId: string;
  log: Logger;
  dialect: CsvDialect;
  /** Each Redis step below may run again through a cluster failover (each is safe to repeat; the reservation made so). */
  ride: Ride;
  heartbeat: ImportHeartbeat;
}

/** One import under way: its batch, what it has counted and collected, and where its rejected rows go. */
interface ImportRun<P> extends OpenedBatch<P> {
  counts: ImportCounts;
  refusedBefore: ImportResult['refusedBefore'];
  elsewhere: ImportResult['elsewhere'];
  identicalLines: number[];
  summary: ValidationSummary;
  rejects: RejectsWriter;
  kept: KeptItems<P> | undefined;
  /** Chunk jobs numbered so far (`chunkJobId(batchId, n)`). */
  chunksQueued: number;
  /** A confirmation ran again: this run's enqueued count is read back from the batch at the end. */
  recount: boolean;
  /** The read of the file has ended, found unchanged (readEnded): what is still queued comes from memory or spill. */
  read: boolean;
}

/** A chunk job as addBulk takes it. */
type QueuedChunk<P> = { name: string; data: ChunkJobData<P>; opts: JobsOptions };

/** The records of one round grouped `ordersPerJob` to a job, each group with its job id and its records as the job holds them. */
interface JobGroups<P> {
  groups: ValidRecord<P>[][];
  ids: string[];
  records: StoredChunkRecord<P>[][];
}

async function importUntraced<P>(file: string, options: ImportOptions, deps: ImportDeps<P>): Promise<ImportResult<P>> {
  const run = newRun(await openBatch(file, options, deps));
  // Look-ahead: up to FLUSHES_IN_FLIGHT chunks are reserved and queued while the next is read and validated, so
  // the parser's CPU and Redis's round trips (reserve, addBulk, confirm, counts: four a chunk) overlap. Each chunk's
  // steps stay in their order; chunks are independent of each other (their own keys, jobs and count deltas).
  const inFlight: Promise<void>[] = [];
  try {
    await readAndQueue(run, inFlight);
  } catch (error) {
    await Promise.allSettled(inFlight);
    await abandonImport(run, error);
    throw error;
  }
  return completeImport(run);
}

/**
 * Opens and scans the file, then creates its batch and starts its heartbeat: a bad file is refused
 * before anything is created. A failing `onBatchCreated` closes the batch as failed and is thrown on.
 */
async function openBatch<P>(file: string, options: ImportOptions, deps: ImportDeps<P>): Promise<OpenedBatch<P>> {
  // Refuses a bad file before anything is created; a mostly wrong one early in its first read.
  const source = await deps.kind.openSource(file, withRejectionLimit(options));
  // What the file is before its first byte is read: the import refuses it whole if it changes (FILE_CHANGED_WHILE_READ).
  const identity = await fileIdentity(file);
  // Its hash, a NUL anywhere, and whether it streams: read before the batch exists, so nothing of a damaged file is queued.
  const scan = await source.scan({ sha256: true });
  refuseNul(file, scan);
  // The scan read every byte before anything exists: a file written to meanwhile is refused with nothing created.
  await assertUnchanged(file, identity, 'scanned');
  const sha256 = defined(scan.sha256, 'the sha256 the scan was asked for');
  const batchId = newBatchId();
  const log = deps.logger.child({ batchId, file: basename(file) });
  const dialect = inputDialect(source);
  // Each Redis step below may run again through a cluster failover (each is safe to repeat; the reservation made so).
  const ride = deps.rideFailover ?? (<T>(step: () => Promise<T>) => step());
  // The batch names its rejects and results files once they are written (an absolute path: the dashboard may run elsewhere).
  await ride(() => deps.batches.create({ id: batchId, file, sha256, env: deps.env, columns: source.columns, dialect }));
  const heartbeat = startImportHeartbeat(deps.batches, batchId);
  try {
    await options.onBatchCreated?.(batchId);
  } catch (error) {
    heartbeat.stop();
    await deps.batches.finishImport(batchId, 'failed', totalsOf(source), importFailure(error)).catch(() => undefined);
    throw error;
  }
  return { file, options, deps, source, identity, batchId, log, dialect, ride, heartbeat };
}

/** An opened batch with nothing counted yet, its rejects file ready to write and its records kept when asked. */
function newRun<P>(opened: OpenedBatch<P>): ImportRun<P> {
  const { options, deps, source, dialect } = opened;
  const keepItems = options.keepItems ?? 0;
  const rejectsPath = options.rejectsPath ?? RejectsWriter.defaultPath(opened.file);
  return {
    ...opened,
    counts: noImportCounts(),
    refusedBefore: [],
    elsewhere: [],
    kept: keepItems > 0 ? new KeptItems<P>(keepItems, options.tmpDir) : undefined,
    identicalLines: [],
    summary: new ValidationSummary(10, deps.kind.noun),
    rejects: new RejectsWriter(rejectsPath, source.columns, { dialect: outputDialect(dialect, deps.csvOutput) }),
    chunksQueued: 0,
    recount: false,
    read: false,
  };
}

/**
 * Reads the file through validation to its end: rejected rows to the rejects file, valid records in
 * rounds (small first, doubling up to the chunk size) reserved and queued while the read goes on.
 * Ends with every round settled, the file checked unchanged at the end of its read (readEnded: from
 * then on its batch may be sent), and the rejects file named on the batch.
 */
async function readAndQueue<P>(run: ImportRun<P>, inFlight: Promise<void>[]): Promise<void> {
  const { file, options, summary, kept, rejects } = run;
  const maxChunk = options.chunkSize ?? 500;
  // Small rounds first, so workers have the first jobs while the next rounds are reserved and queued.
  let chunkSize = Math.min(FIRST_CHUNK, maxChunk);
  let chunk: ValidRecord<P>[] = [];
  const flush = async (): Promise<void> => {
    assertBeating(run);
    // Taken before any await: the read goes on filling the next chunk meanwhile.
    const taken = chunk;
    chunk = [];
    await queueRound(run, taken);
  };
  const flushAhead = async (): Promise<void> => {
    if (inFlight.length >= FLUSHES_IN_FLIGHT) await inFlight.shift();
    const flushing = flush();
    flushing.catch(() => undefined); // observed when awaited; not an unhandled rejection meanwhile
    inFlight.push(flushing);
  };
  // The first 10,000 rows are judged before the first chunk is reserved: a mostly wrong file queues nothing.
  const judged = limitRejectionBatches(untilRead(run), file, options.maxRejectedPercent);
  for await (const batch of judged) {
    for (const item of batch) {
      summary.add(item);
      if (kept !== undefined) await kept.add(item);
      if (item.kind === 'rejected') {
        await rejects.write(item);
        continue;
      }
      chunk.push(item);
      if (chunk.length >= chunkSize) {
        await flushAhead();
        chunkSize = Math.min(maxChunk, chunkSize * 2);
      }
    }
  }
  if (chunk.length > 0) await flushAhead();
  while (inFlight.length > 0) await inFlight.shift();
  await rejects.close();
  if (rejects.rowsWritten > 0)
    await run.ride(() => run.deps.batches.setFiles(run.batchId, { rejectsFile: resolve(rejects.path) }));
}

/**
 * The source's batches, then the end of the read (readEnded) once it has none left: a file read whole
 * before its first record (under 10,000 rows, or read through spill files) ends its read before
 * anything of it is queued, a streamed one with its last rows.
 */
async function* untilRead<P>(run: ImportRun<P>): AsyncGenerator<(ValidRecord<P> | RejectedRecord)[]> {
  yield* run.source.batches();
  await readEnded(run);
}

/**
 * The read is over: the file is checked unchanged (a file that grew while it was read is refused, its
 * batch cancelled, nothing of it sent), then its batch notes `readAt`, so workers send it while the rest
 * is queued (batchGate-4.lua: once a whole canary is queued); chunks put back meanwhile are woken. What
 * is queued after this comes from memory or the spill files, never from the file: it is not checked again.
 */
async function readEnded<P>(run: ImportRun<P>): Promise<void> {
  await assertUnchanged(run.file, run.identity, 'imported');
  await run.ride(() => run.deps.batches.markRead(run.batchId));
  run.read = true;
  // Chunks of it can only have been put back if some were queued while it was read (a streamed file).
  if (run.chunksQueued > 0) await wake(run);
}

/** Throws IMPORT_INTERRUPTED once Redis stopped hearing this import's heartbeat (its batch was closed as interrupted). */
function assertBeating(run: Pick<OpenedBatch<unknown>, 'heartbeat' | 'batchId'>): void {
  if (run.heartbeat.lost) {
    throw new InfrastructureError(
      'IMPORT_INTERRUPTED',
      `Redis did not hear from this import for a while, so batch ${run.batchId} was closed as interrupted and its reserved orders queued; run the same command again to finish the file (nothing is sent twice).`,
    );
  }
}

/**
 * One round of valid records: the file checked unchanged, those the results file records as delivered
 * left out, the rest reserved and queued, and what the ledger said of each counted on the batch and the run.
 */
async function queueRound<P>(run: ImportRun<P>, taken: ValidRecord<P>[]): Promise<void> {
  // One stat a round while the file is read: a file that changes after its scan queues nothing more, and its
  // batch is cancelled (importUntraced). Once read (readEnded), the round's records are what was read.
  if (!run.read) await assertUnchanged(run.file, run.identity, 'imported');
  const skippedResults = await dropDeliveredByResults(run, taken);
  const orders = skippedResults.size === 0 ? taken : taken.filter((order) => !skippedResults.has(order.key));
  const { results, enqueued } = orders.length === 0 ? { results: [], enqueued: 0 } : await queueChunks(run, orders);
  run.counts.enqueued += enqueued;
  const delta = await tallyOutcomes(run, orders, results);
  delta.skippedResults = skippedResults.size;
  await run.ride(() => run.deps.batches.addImportCounts(run.batchId, delta));
  for (const [field, by] of Object.entries(delta)) run.counts[field as keyof typeof delta] += by;
}

/**
 * The keys of a round's records that the results file records as delivered and the ledger does not know.
 * The results file is asked only about those: the ledger stays the first authority. None with `force`.
 */
async function dropDeliveredByResults<P>(run: ImportRun<P>, orders: ValidRecord<P>[]): Promise<Set<string>> {
  const prior = run.options.force === true ? undefined : run.options.priorResults;
  const named = prior === undefined ? [] : orders.filter((order) => prior.delivered.has(order.key));
  if (named.length === 0) return new Set();
  const entries = await run.ride(() => run.deps.ledger.getMany(named.map((order) => order.key)));
  return new Set(named.filter((_, i) => entries[i] === undefined).map((order) => order.key));
}

/**
 * What the ledger said of each record of a round, as the batch's skip counters: the first 20 identical
 * and refused-before noted, the keys another batch queued collected, and a conflict written as a rejected row.
 */
async function tallyOutcomes<P>(
  run: ImportRun<P>,
  orders: ValidRecord<P>[],
  results: ReserveResult[],
): Promise<Omit<ImportCounts, 'rows' | 'orders' | 'valid' | 'rejected' | 'enqueued'>> {
  const { identicalLines, refusedBefore, elsewhere, rejects } = run;
  const delta = noSkips();
  for (const [i, result] of results.entries()) {
    const order = defined(orders[i], 'the order of a reserve result');
    if (result.outcome === 'delivered') {
      delta.skippedDelivered++;
      if (order.orderRef === undefined) {
        delta.skippedIdentical++;
        if (identicalLines.length < 20) identicalLines.push(...order.lines.slice(0, 1));
      }
    } else if (result.outcome === 'held') delta.skippedHeld++;
    else if (result.outcome === 'refused') {
      delta.skippedRefused++;
      if (refusedBefore.length < 20) refusedBefore.push({ orderKey: order.key, batchId: result.batchId });
    } else if (result.outcome === 'queued') {
      delta.skippedQueued++;
      elsewhere.push({ orderKey: order.key, batchId: result.batchId });
    } else if (result.outcome === 'conflict') {
      delta.conflicts++;
      await rejects.write(conflictRejection(order, result, fingerprintOf(order.payload)));
    }
  }
  return delta;
}

/** `ordersPerJob` records to a job (chunkJobId as its id): each chunk job holds the records its reservation took. */
async function queueChunks<P>(
  run: ImportRun<P>,
  orders: ValidRecord<P>[],
): Promise<{ results: ReserveResult[]; enqueued: number }> {
  const chunks = groupIntoJobs(run, orders);
  await linkReplacements(run, orders);
  const reserved = await reserveGroups(run, chunks);
  const toAdd = takenJobs(run, chunks, reserved);
  // Both safe to repeat: BullMQ ignores a job id it has, and a chunk is counted once.
  if (toAdd.length > 0) await run.ride(() => run.deps.queue.addBulk(toAdd));
  const enqueued = await confirmJobs(run, toAdd);
  return { results: reserved.flat(), enqueued };
}

/** A round's records in groups of `ordersPerJob`, each numbered with the next chunk job id of the batch. */
function groupIntoJobs<P>(run: ImportRun<P>, orders: ValidRecord<P>[]): JobGroups<P> {
  const { deps, batchId } = run;
  const perJob = deps.ordersPerJob ?? 1;
  const groups: ValidRecord<P>[][] = [];
  for (let i = 0; i < orders.length; i += perJob) groups.push(orders.slice(i, i + perJob));
  const ids = groups.map(() => chunkJobId(batchId, ++run.chunksQueued));
  const records = groups.map((group) => group.map((order) => toChunkRecord(order, run.source.columns, deps.kind)));
  return { groups, ids, records };
}

/** Fixed rows of an exported dead letter: linked before they can be delivered, so delivery closes it. */
async function linkReplacements<P>(run: ImportRun<P>, orders: ValidRecord<P>[]): Promise<void> {
  const links = orders.flatMap((order) => {
    const old = replacedKey(order);
    return old === undefined ? [] : [{ orderKey: order.key, replaces: old }];
  });
  if (links.length > 0) await run.ride(() => run.deps.ledger.linkSupersedes(links));
}

/** Reserves each job's records in the ledger; a try again after a lost reply owns what the lost try reserved. */
async function reserveGroups<P>(run: ImportRun<P>, chunks: JobGroups<P>): Promise<ReserveResult[][]> {
  const { deps, options, batchId } = run;
  const { groups, ids, records } = chunks;
  const reserve = () =>
    deps.ledger.reserveChunks(
      groups.map((group, c) =>
        group.map((order, i) => ({
          orderKey: order.key,
          fingerprint: fingerprintOf(order.payload),
          record: records[c]?.[i],
        })),
      ),
      ids,
      { name: deps.kind.jobName, layout: deps.kind.payloadCodec?.version },
      { batchId, force: options.force === true, retryRefused: options.retryRefused === true },
    );
  let tries = 0;
  return run.ride(async () =>
    tries++ === 0 ? reserve() : ownReservations(await reserve(), { groups, ids, batchId }, deps),
  );
}

/** The jobs to add: each group's records its reservation took, none for a group that took nothing. */
function takenJobs<P>(run: ImportRun<P>, chunks: JobGroups<P>, reserved: ReserveResult[][]): QueuedChunk<P>[] {
  const { deps, batchId } = run;
  const toAdd: QueuedChunk<P>[] = [];
  for (const [c, group] of chunks.records.entries()) {
    const taken = group.filter((_, i) => reserved[c]?.[i]?.outcome === 'reserved');
    // The same data as the job the ledger keeps (reserveChunk.lua, through keptChunkFrame): the records taken.
    if (taken.length > 0)
      toAdd.push({
        name: deps.kind.jobName,
        data: chunkJob(batchId, taken, deps.kind.payloadCodec?.version),
        opts: { ...deps.jobOptions, jobId: defined(chunks.ids[c], 'the id of a chunk') },
      });
  }
  return toAdd;
}

/** Confirms the added jobs in the ledger (it drops their kept jobs and counts them): how many it counted. */
async function confirmJobs<P>(run: ImportRun<P>, toAdd: QueuedChunk<P>[]): Promise<number> {
  let confirms = 0;
  return run.ride(() => {
    // A repeated confirmation counts only what the lost one did not: this run's count is read back at the end.
    if (confirms++ > 0) run.recount = true;
    return run.deps.ledger.confirmChunks(
      toAdd.map((job) => ({
        chunkId: defined(job.opts.jobId, 'the jobId takenJobs gave'),
        orderKeys: job.data.records.map((record) => record.key),
      })),
      run.batchId,
    );
  });
}

/**
 * A failed import, after its rounds settled: a file that changed while read has its batch cancelled, and
 * the batch is closed as failed with why (its kept records and rejects file dropped, the failure logged).
 */
async function abandonImport<P>(run: ImportRun<P>, error: unknown): Promise<void> {
  const { deps, batchId, source, log } = run;
  // Refused whole: what it queued before the change is cancelled, so no order of a half-read file goes on.
  if (isBulkorderError(error) && error.code === 'FILE_CHANGED_WHILE_READ' && deps.cancelBatch !== undefined)
    await deps.cancelBatch(batchId, error.message).catch((cancelError: unknown) => {
      log.error({ err: cancelError }, 'the batch of a file that changed while read could not be cancelled');
    });
  run.kept?.dispose();
  run.heartbeat.stop();
  await run.rejects.abort().catch(() => undefined);
  await deps.batches.finishImport(batchId, 'failed', totalsOf(source), importFailure(error)).catch(() => undefined);
  await wake(run);
  log.error({ err: error }, 'import stopped; run it again to finish (nothing is queued twice)');
}

/**
 * The read is over: the chunks workers took while it went on (and put back, src/lua/scripts/batchGate-4.lua)
 * go now rather than when their rest ends. Only a speed-up: a failure is logged, they go a moment later.
 */
async function wake<P>(run: ImportRun<P>): Promise<void> {
  await run.deps.wakeBatch?.(run.batchId).catch((error: unknown) => {
    run.log.warn(
      { err: error },
      'could not wake the chunks put back while the file was read; they go after their rest',
    );
  });
}

/** A file read to its end: its batch closed as imported, the counts final (read back after a repeated confirmation). */
async function completeImport<P>(run: ImportRun<P>): Promise<ImportResult<P>> {
  const { deps, batchId, source, counts, ride, rejects, kept, heartbeat, log } = run;
  const { summary, elsewhere, identicalLines, refusedBefore } = run;
  heartbeat.stop();
  Object.assign(counts, totalsOf(source));
  await ride(() => deps.batches.finishImport(batchId, 'imported', totalsOf(source)));
  await wake(run);
  if (run.recount) counts.enqueued = (await ride(() => deps.batches.get(batchId)))?.enqueued ?? counts.enqueued;
  log.info({ counts }, 'file imported');
  return {
    batchId,
    counts,
    summary,
    rejectsPath: rejects.rowsWritten > 0 ? rejects.path : undefined,
    elsewhere,
    identicalLines,
    refusedBefore,
    ...(kept === undefined ? {} : { kept }),
  };
}

/**
 * A reservation tried again after its reply was lost (a cluster failover mid-call): what the lost try
 * reserved now reads `queued` by this batch. An entry of this batch that names this try's chunk was
 * reserved by it: `reserved` again, so its job is added and counted once (confirmChunk counts a chunk once).
 */
async function ownReservations<P>(
  results: ReserveResult[][],
  chunks: { groups: readonly (readonly ValidRecord<P>[])[]; ids: readonly string[]; batchId: string },
  deps: ImportDeps<P>,
): Promise<ReserveResult[][]> {
  const { groups, ids, batchId } = chunks;
  const mine = results.flatMap((chunk, c) =>
    chunk.flatMap((result, i) =>
      result.outcome === 'queued' && result.batchId === batchId
        ? [{ chunk, i, id: ids[c], key: defined(groups[c]?.[i], 'the order of a reserve result').key }]
        : [],
    ),
  );
  if (mine.length === 0) return results;
  const entries = await deps.ledger.getMany(mine.map((m) => m.key));
  mine.forEach((m, n) => {
    if (entries[n]?.chunkId === m.id) m.chunk[m.i] = { outcome: 'reserved' };
  });
  return results;
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
