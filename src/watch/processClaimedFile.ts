import { lstat } from 'node:fs/promises';
import type { TextSink } from '../textSink.js';
import { basename, join } from 'node:path';
import { followBatch } from '../batches/followBatch.js';
import { needsAttention, type Batch } from '../batches/batchStore.js';
import { writeResults } from '../batches/writeResults.js';
import type { ResultsCounts } from '../kinds/resultsLayout.js';
import { defined, isBulkorderError } from '../errors.js';
import { importFile } from '../importer/importFile.js';
import { followElsewhere } from '../importer/followElsewhere.js';
import { reconcilerFor } from '../importer/reconcileImports.js';
import { resultsAttention } from '../importer/importVerdict.js';
import type { IngestOptions } from '../ingest/openOrderSource.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import {
  dropSidecar,
  filedSidecar,
  moveClaimed,
  originalName,
  SIDECAR_EXT,
  workingSidecar,
  writeSidecarText,
  writeSummary,
  type DropFolder,
} from './dropFolder.js';

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

/** How a claimed file ended, with the summary written beside it. `interrupted`: left in processing/ for a later run to resume. */
export type ProcessOutcome =
  { to: 'done' | 'failed'; needsAttention: boolean; summary: FileSummary } | { to: 'interrupted' };

/** A file's `.summary.json` (and its entry in `watch --once --json`). */
export type FileSummary = Record<string, unknown> & { file: string; claimedAs: string; outcome: 'done' | 'failed' };

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

  const work: ClaimedFile<P> = { claim, path, deps, log, claimedAt };
  const earlier = await batchesOfClaim(claim, services);
  await closeDeadImports(services, earlier);
  // What such a dead import reserved but never queued is queued now (under its batch, which then settles).
  const reconcile = reconcilerFor({ ...services, codec: services.kind.payloadCodec }, log);
  await reconcile();
  const imported = await importUnlessImported(work, earlier);
  if ('refused' in imported) return fail(claim, deps, imported.refused, claimedAt);
  const batches = await followToEnd(work, { ...imported, reconcile });
  if (batches === undefined) return { to: 'interrupted' };
  return fileAsDone(work, imported.batchIds, batches);
}

/** One claimed file as it is worked on: its claimed name and path in processing/, the watcher's deps. */
interface ClaimedFile<P> {
  claim: string;
  /** The file in processing/. */
  path: string;
  deps: ProcessDeps<P>;
  /** Bound to the file's original name and its claim. */
  log: Logger;
  /** When this attempt began (ISO), for the summary. */
  claimedAt: string;
}

/** The batches a claimed file's imports made so far, this attempt's and a dead watcher's. */
interface ClaimImports {
  /** Oldest first; the last one is the import the results are written from. */
  batchIds: string[];
  /** Keys of this file's orders another batch had queued: followed until they settle too. */
  elsewhere: string[];
}

/**
 * The batches of a claimed file: those recorded under its claim, and before them any recent batch
 * of a file of its name that the record missed.
 */
async function batchesOfClaim<P>(claim: string, services: Services<P>): Promise<string[]> {
  let batchIds = JSON.parse(
    (await services.redis.hget(services.keys.watchClaim(claim), 'batches')) ?? '[]',
  ) as string[];
  // A watcher that died during the import never recorded its batch; the claimed name is unique,
  // so a recent batch of a file of this name is that one (in the dead watcher's folder, or this
  // one's if an attempt here was interrupted). Its orders are followed with the rest.
  for (const batch of await services.batches.list(RECENT_BATCHES)) {
    if (basename(batch.file) === claim && !batchIds.includes(batch.id)) batchIds = [batch.id, ...batchIds];
  }
  return batchIds;
}

/** Closes the batches whose importer died mid-file, so each can settle on what it queued; the file is imported again. */
async function closeDeadImports<P>(services: Services<P>, batchIds: readonly string[]): Promise<void> {
  for (const id of batchIds) {
    const batch = await services.batches.get(id);
    if (batch?.importState === 'importing')
      await services.batches.finishImport(id, 'failed', {
        rows: batch.rows,
        orders: batch.orders,
        valid: batch.valid,
        rejected: batch.rejected,
      });
  }
}

/**
 * Imports the file unless its last batch finished importing, and records the new batch under the
 * claim. A file refused as a whole (exit 2 or 3) comes back as `refused`; any other error is thrown.
 */
async function importUnlessImported<P>(
  work: ClaimedFile<P>,
  batchIds: string[],
): Promise<ClaimImports | { refused: { code: string; message: string } }> {
  const { claim, path, deps, log } = work;
  const { folder, services } = deps;
  const lastId = batchIds.at(-1);
  const last = lastId === undefined ? undefined : await services.batches.get(lastId);
  if (last !== undefined && last.importState === 'imported') return { batchIds, elsewhere: [] };
  await dropSidecar(folder, claim, 'rejects');
  try {
    const result = await importFile(
      path,
      { ...deps.ingest, rejectsPath: workingSidecar(folder, claim, 'rejects') },
      services.pipeline(log),
    );
    const imported = [...batchIds, result.batchId];
    const claimKey = services.keys.watchClaim(claim);
    await services.redis
      .multi()
      .hset(claimKey, { batches: JSON.stringify(imported), watcher: deps.watcherId })
      .pexpire(claimKey, services.delivery.ledgerRetentionMs)
      .exec();
    log.info({ batchId: result.batchId, counts: result.counts }, 'drop-folder file imported');
    // Every one, those of this file's earlier (dead) import too: what it reserved but never queued
    // counts in its batch only once a reconciler queues it, so following its batch alone can end first.
    return { batchIds: imported, elsewhere: result.elsewhere.map((e) => e.orderKey) };
  } catch (error) {
    if (isBulkorderError(error) && (error.exitCode === 2 || error.exitCode === 3)) {
      return { refused: { code: error.code, message: error.message } };
    }
    throw error;
  }
}

/**
 * Follows the file's batches, then its orders another batch had queued, until every one settles.
 * Returns the batches as they ended, or undefined when the watcher stopped or lost the file first.
 */
async function followToEnd<P>(
  work: ClaimedFile<P>,
  imports: ClaimImports & { reconcile: () => Promise<unknown> },
): Promise<Batch[] | undefined> {
  const { services, signal } = work.deps;
  const batches: Batch[] = [];
  for (const id of imports.batchIds) {
    const { batch, settled } = await followBatch(services.batches, id, { out: quiet, pollMs: 250, signal });
    if (!settled) return undefined;
    batches.push(batch);
  }
  // Orders of this file another batch had queued: the results must show how they ended.
  const unsettled = await followElsewhere(services.ledger, imports.elsewhere, {
    reconcile: imports.reconcile,
    out: quiet,
    ...(signal ? { signal } : {}),
  });
  return unsettled > 0 ? undefined : batches;
}

/**
 * Finishes a file whose orders all settled: writes its results, its `.needs-attention` note when
 * something needs a person, and its summary, moves it to done/ and names the filed paths in its batches.
 */
async function fileAsDone<P>(work: ClaimedFile<P>, batchIds: string[], batches: Batch[]): Promise<ProcessOutcome> {
  const { claim, path, deps, log } = work;
  const { folder, services } = deps;
  const lastBatch = defined(batches.at(-1), 'the last batch of a finished file');
  const results: ResultsCounts = await writeResults(
    {
      file: path,
      ingest: deps.ingest,
      batchId: lastBatch.id,
      ledger: services.ledger,
      outPath: workingSidecar(folder, claim, 'results'),
      kind: services.kind,
    },
    {
      csvOutput: services.files.csv,
    },
  );
  const totals = {
    delivered: sum(batches, 'delivered'),
    dead: sum(batches, 'dead'),
    held: sum(batches, 'held'),
    possibleDuplicates: results.possibleDuplicates,
  };
  // Where the files are once moved to done/: the batches name them there (status, the dashboard), not in processing/.
  const hasRejects = await exists(workingSidecar(folder, claim, 'rejects'));
  const filed = {
    file: join(folder.done, claim),
    resultsFile: filedSidecar(folder, claim, 'results', 'done'),
    ...(hasRejects ? { rejectsFile: filedSidecar(folder, claim, 'rejects', 'done') } : {}),
  };
  const attention = await noteAttention(work, { lastBatch, results, facts: { totals, hasRejects } });
  const summary = doneSummary(work, { batchIds, lastBatch, totals, results, attention, filed });
  await writeSummary(folder, claim, summary);
  const moved = await moveClaimed(folder, claim, 'done');
  for (const id of batchIds) await services.batches.setFiles(id, filed);
  await services.redis.del(services.keys.watchClaim(claim));
  log.info({ to: moved, delivery: totals, needsAttention: attention }, 'drop-folder file done');
  return { to: 'done', needsAttention: attention, summary };
}

/** What decides whether a finished file needs a person. */
interface AttentionInput {
  /** The file's own (last) batch. */
  lastBatch: Batch;
  results: ResultsCounts;
  facts: Pick<AttentionFacts, 'totals' | 'hasRejects'>;
}

/**
 * Whether a finished file needs a person; writes its `.needs-attention` note if so, else drops
 * an earlier attempt's note, if one was left.
 */
async function noteAttention<P>(work: ClaimedFile<P>, input: AttentionInput): Promise<boolean> {
  const { claim, deps } = work;
  const { lastBatch, results, facts } = input;
  const attention =
    needsAttention({
      rejected: lastBatch.rejected,
      skippedHeld: lastBatch.skippedHeld,
      conflicts: lastBatch.conflicts,
      dead: facts.totals.dead,
      held: facts.totals.held,
    }) || resultsAttention(results);
  if (attention)
    await writeSidecarText(
      deps.folder,
      claim,
      'attention',
      attentionNote(claim, lastBatch, {
        ...facts,
        cli: deps.services.kind.cli,
        resultsSayAttention: resultsAttention(results),
      }),
    );
  else await dropSidecar(deps.folder, claim, 'attention'); // an earlier attempt's note, if one was left
  return attention;
}

/** What a done file's summary is built from besides the claim. */
interface DoneFacts {
  batchIds: string[];
  lastBatch: Batch;
  /** How the file's orders ended, over all its batches. */
  totals: Record<'delivered' | 'dead' | 'held' | 'possibleDuplicates', number>;
  results: ResultsCounts;
  attention: boolean;
  /** Where the file and its results and rejects are in done/. */
  filed: { file: string; resultsFile: string; rejectsFile?: string };
}

/** The `.summary.json` of a file moved to done/. */
function doneSummary<P>(work: ClaimedFile<P>, facts: DoneFacts): FileSummary {
  const { claim, deps, claimedAt } = work;
  const { batchIds, lastBatch, totals, results, attention, filed } = facts;
  return {
    file: originalName(claim),
    claimedAs: claim,
    outcome: 'done',
    needsAttention: attention,
    path: filed.file,
    resultsFile: filed.resultsFile,
    ...(filed.rejectsFile === undefined ? {} : { rejectsFile: filed.rejectsFile }),
    ...(attention ? { needsAttentionFile: filedSidecar(deps.folder, claim, 'attention', 'done') } : {}),
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
  };
}

/** What the `.needs-attention` note is written from besides the claim and its batch. */
interface AttentionFacts {
  /** The batch's dead letters and held records now. */
  totals: { dead: number; held: number };
  /** A rejects file was written beside the claim. */
  hasRejects: boolean;
  /** The kind's command (`bulkorder` or `bulkorder accounts`). */
  cli: string;
  /** The results file names something that needs a person. */
  resultsSayAttention: boolean;
}

/**
 * The `.needs-attention` note beside a file in done/: what in it needs a person, and the command or file
 * that acts on it. Its presence is the signal (`ls done/*.needs-attention`); its text says what to do.
 */
function attentionNote(claim: string, batch: Batch, facts: AttentionFacts): string {
  const { totals, hasRejects, cli, resultsSayAttention } = facts;
  const lines = [`${originalName(claim)} (claimed as ${claim}, batch ${batch.id}) needs attention:`];
  if (batch.rejected > 0 || batch.conflicts > 0)
    lines.push(
      `- ${batch.rejected} rejected${batch.conflicts > 0 ? `, ${batch.conflicts} not sent: ORDER_REF_REUSED` : ''}: ${hasRejects ? `the rows and reasons are in ${claim}${SIDECAR_EXT.rejects}; fix them there and drop that file in inbox/` : `see ${claim}${SIDECAR_EXT.results}`}`,
    );
  if (totals.dead > 0)
    lines.push(`- ${totals.dead} dead-lettered (the API refused them): ${cli} dead-letters list --batch ${batch.id}`);
  if (totals.held > 0)
    lines.push(`- ${totals.held} held for review (sent, no answer): ${cli} review list --batch ${batch.id}`);
  if (batch.skippedHeld > 0)
    lines.push(`- ${batch.skippedHeld} not sent because an earlier run holds them for review: ${cli} review list`);
  if (resultsSayAttention && lines.length === 1)
    lines.push(`- some orders did not end delivered: see ${claim}${SIDECAR_EXT.results} (outcome column)`);
  return lines.join('\n') + '\n';
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

async function fail<P>(
  claim: string,
  deps: ProcessDeps<P>,
  why: { code: string; message: string },
  claimedAt: string,
): Promise<ProcessOutcome> {
  const summary: FileSummary = {
    file: originalName(claim),
    claimedAs: claim,
    outcome: 'failed',
    code: why.code,
    reason: why.message,
    watcher: deps.watcherId,
    claimedAt,
    finishedAt: new Date().toISOString(),
  };
  await writeSummary(deps.folder, claim, summary);
  const moved = await moveClaimed(deps.folder, claim, 'failed');
  await deps.services.redis.del(deps.services.keys.watchClaim(claim));
  deps.logger.warn(
    { file: originalName(claim), to: moved, code: why.code, reason: why.message },
    'drop-folder file refused',
  );
  return { to: 'failed', needsAttention: true, summary };
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
