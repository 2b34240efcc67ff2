import { lstat } from 'node:fs/promises';
import type { TextSink } from '../textSink.js';
import { basename, join } from 'node:path';
import { followBatch } from '../batches/followBatch.js';
import { needsAttention, type Batch } from '../batches/batchStore.js';
import { writeResults } from '../batches/writeResults.js';
import type { ResultsCounts } from '../kinds/resultsLayout.js';
import { isBulkorderError } from '../errors.js';
import { importFile } from '../importer/importFile.js';
import { followElsewhere } from '../importer/followElsewhere.js';
import { reconcileImports } from '../importer/reconcileImports.js';
import { resultsAttention } from '../importer/importVerdict.js';
import type { IngestOptions } from '../ingest/openOrderSource.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { dropSidecar, moveClaimed, originalName, workingSidecar, writeSummary, type DropFolder } from './dropFolder.js';

export interface ProcessDeps<P> {
  /** The kind's services: its pipeline imports, its retention keeps the claim record. */
  services: Services<P>;
  logger: Logger;
  folder: DropFolder;
  ingest: IngestOptions;
  /** Files larger than this are refused. */
  maxBytes: number;
  /** Identifies this watcher in summaries and logs. */
  watcherId: string;
  /** Aborted when the watcher stops or loses the file's lock: the file then stays in processing/. */
  signal: AbortSignal;
}

/** How a claimed file ended. `interrupted`: left in processing/ for a later run to resume. */
export type ProcessOutcome = { to: 'done' | 'failed'; needsAttention: boolean } | { to: 'interrupted' };

/** How far back a resumed file looks for a batch its dead watcher started (most recent first). */
const RECENT_BATCHES = 500;

const quiet: TextSink = { isTTY: false, write: () => true };

/**
 * Works one claimed file to the end: checks it, imports it (once: the batch is recorded under the
 * claim, so a resumed file is followed instead of imported again), follows its batches until
 * every order settles, writes results and summary, and moves it to done/. A file refused as a
 * whole goes to failed/. Any other error leaves it in processing/ for the next attempt; a second
 * import of the same file sends nothing twice (the ledger).
 */
export async function processClaimedFile<P>(claim: string, deps: ProcessDeps<P>): Promise<ProcessOutcome> {
  const { folder, services, logger } = deps;
  const path = join(folder.processing, claim);
  const log = logger.child({ file: originalName(claim), claim });
  const claimedAt = new Date().toISOString();
  const refusal = await checkFile(path, deps.maxBytes);
  if (refusal !== undefined) return fail(claim, deps, { code: refusal.code, message: refusal.message }, claimedAt);

  const claimKey = services.keys.watchClaim(claim);
  let batchIds = JSON.parse((await services.redis.hget(claimKey, 'batches')) ?? '[]') as string[];
  // A watcher that died during the import never recorded its batch; the claimed name is unique,
  // so a recent batch of a file of this name is that one (in the dead watcher's folder, or this
  // one's if an attempt here was interrupted). Its orders are followed with the rest.
  for (const batch of await services.batches.list(RECENT_BATCHES)) {
    if (basename(batch.file) === claim && !batchIds.includes(batch.id)) batchIds = [batch.id, ...batchIds];
  }
  for (const id of batchIds) {
    const batch = await services.batches.get(id);
    // Its importer died mid-file: close the batch so it can settle on what it queued; the file is imported again.
    if (batch?.importState === 'importing')
      await services.batches.finishImport(id, 'failed', {
        rows: batch.rows,
        orders: batch.orders,
        valid: batch.valid,
        rejected: batch.rejected,
      });
  }
  // What such a dead import reserved but never queued is queued now (under its batch, which then settles).
  const reconcile = () =>
    reconcileImports({
      ledger: services.ledger,
      batches: services.batches,
      queue: services.queue,
      jobOptions: services.jobOptions,
      logger: log,
    });
  await reconcile();
  let elsewhere: string[] = [];
  const last = batchIds.length === 0 ? undefined : await services.batches.get(batchIds[batchIds.length - 1]!);
  if (last === undefined || last.importState !== 'imported') {
    await dropSidecar(folder, claim, 'rejects');
    try {
      const result = await importFile(
        path,
        { ...deps.ingest, rejectsPath: workingSidecar(folder, claim, 'rejects') },
        services.pipeline(log),
      );
      batchIds = [...batchIds, result.batchId];
      // Every one, those of this file's earlier (dead) import too: what it reserved but never queued
      // counts in its batch only once a reconciler queues it, so following its batch alone can end first.
      elsewhere = result.elsewhere.map((e) => e.orderKey);
      await services.redis
        .multi()
        .hset(claimKey, { batches: JSON.stringify(batchIds), watcher: deps.watcherId })
        .pexpire(claimKey, services.delivery.ledgerRetentionMs)
        .exec();
      log.info({ batchId: result.batchId, counts: result.counts }, 'drop-folder file imported');
    } catch (error) {
      if (isBulkorderError(error) && (error.exitCode === 2 || error.exitCode === 3)) {
        return fail(claim, deps, { code: error.code, message: error.message }, claimedAt);
      }
      throw error;
    }
  }

  const batches: Batch[] = [];
  for (const id of batchIds) {
    const { batch, settled } = await followBatch(services.batches, id, {
      out: quiet,
      pollMs: 250,
      signal: deps.signal,
    });
    if (!settled) return { to: 'interrupted' };
    batches.push(batch);
  }
  // Orders of this file another batch had queued: the results must show how they ended.
  if (
    (await followElsewhere(services.ledger, elsewhere, {
      reconcile,
      out: quiet,
      ...(deps.signal ? { signal: deps.signal } : {}),
    })) > 0
  )
    return { to: 'interrupted' };
  const lastBatch = batches[batches.length - 1]!;
  const resultsPath = workingSidecar(folder, claim, 'results');
  const results: ResultsCounts = await writeResults(
    path,
    deps.ingest,
    lastBatch.id,
    services.ledger,
    resultsPath,
    services.kind,
  );
  const totals = {
    delivered: sum(batches, 'delivered'),
    dead: sum(batches, 'dead'),
    held: sum(batches, 'held'),
    possibleDuplicates: results.possibleDuplicates,
  };
  const attention =
    needsAttention({
      rejected: lastBatch.rejected,
      skippedHeld: lastBatch.skippedHeld,
      conflicts: lastBatch.conflicts,
      dead: totals.dead,
      held: totals.held,
    }) || resultsAttention(results);
  await writeSummary(folder, claim, {
    file: originalName(claim),
    claimedAs: claim,
    outcome: 'done',
    needsAttention: attention,
    batches: batchIds,
    import: {
      rows: lastBatch.rows,
      orders: lastBatch.orders,
      valid: lastBatch.valid,
      rejected: lastBatch.rejected,
      enqueued: lastBatch.enqueued,
      skippedDelivered: lastBatch.skippedDelivered,
      skippedHeld: lastBatch.skippedHeld,
      skippedQueued: lastBatch.skippedQueued,
      conflicts: lastBatch.conflicts,
      skippedIdentical: lastBatch.skippedIdentical,
    },
    delivery: totals,
    results: results.byOutcome,
    watcher: deps.watcherId,
    claimedAt,
    finishedAt: new Date().toISOString(),
  });
  const moved = await moveClaimed(folder, claim, 'done');
  await services.redis.del(claimKey);
  log.info({ to: moved, delivery: totals, needsAttention: attention }, 'drop-folder file done');
  return { to: 'done', needsAttention: attention };
}

async function fail<P>(
  claim: string,
  deps: ProcessDeps<P>,
  why: { code: string; message: string },
  claimedAt: string,
): Promise<ProcessOutcome> {
  await writeSummary(deps.folder, claim, {
    file: originalName(claim),
    claimedAs: claim,
    outcome: 'failed',
    code: why.code,
    reason: why.message,
    watcher: deps.watcherId,
    claimedAt,
    finishedAt: new Date().toISOString(),
  });
  const moved = await moveClaimed(deps.folder, claim, 'failed');
  await deps.services.redis.del(deps.services.keys.watchClaim(claim));
  deps.logger.warn(
    { file: originalName(claim), to: moved, code: why.code, reason: why.message },
    'drop-folder file refused',
  );
  return { to: 'failed', needsAttention: true };
}

/**
 * Refuses what must not be read: symlinks (they may point anywhere), anything but a regular file,
 * hard links (another name for a file that may live outside the folder), and files over the cap.
 * Checked on the claimed name, which only this watcher uses, with lstat (links are not followed).
 */
async function checkFile(path: string, maxBytes: number): Promise<{ code: string; message: string } | undefined> {
  const info = await lstat(path);
  if (info.isSymbolicLink())
    return { code: 'WATCH_SYMLINK', message: 'a symbolic link: drop the file itself, not a link to it' };
  if (!info.isFile())
    return { code: 'WATCH_NOT_A_FILE', message: 'not a regular file (a folder, device, pipe or socket)' };
  if (info.nlink > 1)
    return { code: 'WATCH_HARD_LINK', message: 'a hard link to a file elsewhere: drop a copy of the file' };
  if (info.size > maxBytes)
    return {
      code: 'WATCH_TOO_LARGE',
      message: `${info.size} bytes, over the cap of ${maxBytes} (watch --max-size); split the file or import it with bulkorder import`,
    };
  return undefined;
}

function sum(batches: readonly Batch[], field: 'delivered' | 'dead' | 'held'): number {
  return batches.reduce((total, b) => total + b[field], 0);
}
