import { resolve } from 'node:path';
import { outputPath } from '../ingest/outputPath.js';
import type { TextSink } from '../textSink.js';
import { followBatch } from '../batches/followBatch.js';
import { readBatchCircuit, type BatchCircuitView } from '../batches/batchCircuit.js';
import { ended, isSettled, needsAttention, type Batch } from '../batches/batchStore.js';
import { POSSIBLE_DUPLICATE_CODE, ResultsRows, writeResults } from '../batches/writeResults.js';
import type { RecordItem } from '../ingest/types.js';
import type { ResultsCounts } from '../kinds/resultsLayout.js';
import { POSSIBLE_DUPLICATE } from '../ledger/ledger.js';
import { describeHealth, readDeliveryHealth } from '../services/deliveryControl.js';
import { describeBreakerReport, readBreakerReport } from '../services/breakerReport.js';
import { liveWorkers, WORKER_STALE_MS } from '../worker/workerPresence.js';

import { ExitCode, InfrastructureError } from '../errors.js';
import { readRedisSafety } from '../services/redisSafetyReport.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { importFile, type ImportOptions, type ImportResult } from './importFile.js';
import { followElsewhere } from './followElsewhere.js';
import { elsewhereLines, importAttention, resultsAttention, type ElsewhereFacts } from './importVerdict.js';
import { reconcilerFor, type ReconcileReport } from './reconcileImports.js';
import { fileSha256, readPriorResults, type PriorResults } from '../batches/priorResults.js';
import { readNamespaceMarker } from '../ledger/namespaceMarker.js';
import { LedgerLostError } from '../errors.js';
import {
  checkLedger,
  journalPath,
  readJournal,
  withEntry,
  writeJournal,
  type ImportJournal,
  type JournalEntry,
  type LedgerLossPolicy,
} from './importJournal.js';

/** A worker may take a moment to register: "no worker is running" only after this. */
const NO_WORKER_GRACE_MS = 3000;
/**
 * With --wait, an import keeps the records it read for the results file, up to this many in memory (a
 * longer file's in a temp file, KeptItems): a 5,000-order file then skips a second read and validation
 * at the end (~400 of the results file's ~1,000 CPU-ms, profiled).
 */
const RESULTS_ITEMS_KEPT = 10_000;
/**
 * How often --wait reads its batch: its end is seen within this. A batch read is one HGETALL
 * (10 a second cost the importer and Redis well under 1% of a core); at followBatch's default of
 * 500 ms, a run ended on average 250 ms after its last order settled.
 */
const FOLLOW_POLL_MS = 100;
/**
 * While --wait follows its batch, the results file's rows that can no longer change are made each time
 * this many more orders have ended (ResultsRows.early): when the batch settles, only the last are read
 * from the ledger and made (the 5,013-order file's results took ~300 ms after its last answer).
 */
const EARLY_ROWS_EVERY = 500;

/** Whether and how to follow a batch after its import (`--wait`, `--results`, `--max-wait`). */
export interface FollowSettings {
  wait: boolean;
  /**
   * Keep the import journal beside the input and read an earlier results file as a second ledger
   * (issue 26; `import` and `accounts import` do, the demo and drop folders not yet). `policy`: what
   * to do when the journal shows Redis forgot this file's ledger (default refuse, LEDGER_LOST).
   */
  ledgerGuard?: { policy: LedgerLossPolicy };
  resultsPath?: string;
  /** --max-wait; then exit 5 with the reason. */
  timeoutMs?: number;
  /** Where progress and stall reasons go; default stderr. */
  out?: TextSink;
}

export interface ImportOutcome {
  result: ImportResult;
  batch: Batch | undefined;
  results: ResultsCounts | undefined;
  resultsPath: string | undefined;
  exitCode: number;
  report: string;
  /** The same facts as `report`, for `--json` (README, "`--json` for scripts"). */
  json: Record<string, unknown>;
}

/** One import being reported on: what every part of its report and its following reads. */
interface Imported<P> {
  file: string;
  options: ImportOptions;
  services: Services<P>;
  logger: Logger;
  result: ImportResult<P>;
  guard: LedgerGuard | undefined;
  follow: FollowSettings;
  /** Queues what an earlier run that died reserved and closes its batch (followElsewhere runs it again). */
  reconcile: () => Promise<ReconcileReport>;
}

/** What the watch of a followed batch found last: why it may not move, and the canary's hold that stops the following. */
interface WatchState {
  reasons: string[];
  /** A batch its canary holds: followed through its first probe, then given up with exit 5 and the batch's cause. */
  heldBy: BatchCircuitView | undefined;
  heldStop: AbortController;
  followStart: number;
}

/**
 * Imports one file of the services' record kind and, when asked, follows it to the end and
 * writes its results file: what `import`, `accounts import` and the demo do. Returns the report
 * a person reads and the exit code (0; 4 when something needs attention; 5 when --max-wait ran out).
 */
export async function importAndFollow<P>(
  file: string,
  options: ImportOptions,
  run: { services: Services<P>; logger: Logger },
  follow: FollowSettings,
): Promise<ImportOutcome> {
  const { services, logger } = run;
  const reconcile = reconcilerFor({ ...services, codec: services.kind.payloadCodec }, logger);
  await reconcile(); // an earlier run that died: queue what it reserved, close its batch
  const guard = follow.ledgerGuard === undefined ? undefined : await openGuard(file, options, services, follow);
  const result = await importFile(
    file,
    { ...(guard?.options ?? options), ...(follow.wait ? { keepItems: RESULTS_ITEMS_KEPT } : {}) },
    services.pipeline(logger),
  );
  await guard?.record(result.batchId, 'imported', { counts: { ...result.counts } });
  const imported: Imported<P> = { file, options, services, logger, result, guard, follow, reconcile };
  const lines = importLines(imported);
  if (!follow.wait) return notFollowed(imported, lines);
  return followToEnd(imported, lines);
}

/** The report's lines on the import itself: its counts, what it skipped and why, and its rejected rows. */
function importLines<P>(imported: Imported<P>): string[] {
  const { file, services, result, guard } = imported;
  const kind = services.kind;
  const c = result.counts;
  const lines = [
    `batch ${result.batchId}  ${file}`,
    `  rows ${c.rows}, ${kind.noun}s ${c.orders}: ${c.valid} valid, ${c.rejected} rejected`,
    `  queued ${c.enqueued}; skipped: ${c.skippedDelivered} already delivered, ${c.skippedHeld} held for review, ${c.skippedQueued} queued by another batch`,
  ];
  if (c.skippedRefused > 0) {
    const shown = result.refusedBefore.slice(0, 3).map((r) => `${r.orderKey} (batch ${r.batchId})`);
    lines.push(
      `  already known: ${c.skippedRefused} refused before with the same content, not sent again: the same open dead letters as before (${shown.join(', ')}${c.skippedRefused > shown.length ? ', ...' : ''}); ${kind.cli} open lists them, --retry-refused sends them again`,
    );
  }
  if (c.skippedResults > 0)
    lines.push(
      `  skipped: ${c.skippedResults} already delivered (results file ${guard?.prior?.path ?? ''}; the ledger did not know them)`,
    );
  if (guard?.lost !== undefined)
    lines.push(
      `  LEDGER_LOST overridden (--${guard.policy}): Redis had forgotten batch ${guard.lost.batchId} of ${guard.lost.startedAt}`,
    );
  lines.push(...importAttention(result, kind.noun));
  if (result.rejectsPath !== undefined)
    lines.push(`  rejected rows: ${result.rejectsPath} (fix them there and import that file)`);
  return lines;
}

/** An import not followed (no --wait): the report says how to follow it; orders left to another batch are pending. */
async function notFollowed<P>(imported: Imported<P>, lines: string[]): Promise<ImportOutcome> {
  const { file, services, result, guard } = imported;
  const kind = services.kind;
  const c = result.counts;
  lines.push(...elsewhereLines(result, kind.noun, await elsewhereFacts(services, result)));
  lines.push(`  follow it with: ${kind.cli} status ${result.batchId}`);
  // Orders left to another batch are not done: pending, exit 4 (--wait follows them to their end).
  const exitCode = needsAttention(c) || result.elsewhere.length > 0 ? ExitCode.needsAttention : ExitCode.ok;
  const json = importJson({ file, kind: kind.name, result, guard }, { waited: false });
  return {
    result,
    batch: undefined,
    results: undefined,
    resultsPath: undefined,
    exitCode,
    report: lines.join('\n') + '\n',
    json,
  };
}

/**
 * Follows the batch to its end (or --max-wait, or its canary's hold), and the orders of this file
 * another batch queued too, then writes the results file and reports how the batch settled.
 */
async function followToEnd<P>(imported: Imported<P>, lines: string[]): Promise<ImportOutcome> {
  const { file, services, result, guard, follow, reconcile } = imported;
  const kind = services.kind;
  const c = result.counts;
  const deadline = follow.timeoutMs === undefined ? undefined : Date.now() + follow.timeoutMs;
  const state: WatchState = {
    reasons: [],
    heldBy: undefined,
    heldStop: new AbortController(),
    followStart: Date.now(),
  };
  const watch = () => watchBatch(imported, state);
  const guardedWatch = async () => {
    await guard?.assertKept(result.batchId);
    return watch();
  };
  const source = await resultsSource(imported);
  const { batch, settled: batchSettled } = await followBatch(services.batches, result.batchId, {
    watch: guard === undefined ? watch : guardedWatch,
    pollMs: FOLLOW_POLL_MS,
    signal: state.heldStop.signal,
    ...(source.onRead === undefined ? {} : { onRead: source.onRead }),
    ...(follow.out === undefined ? {} : { out: follow.out }),
    ...(follow.timeoutMs === undefined ? {} : { timeoutMs: follow.timeoutMs }),
  }).catch(async (error: unknown) => {
    await guard?.assertKept(result.batchId); // a batch that vanished: Redis forgot, said as such
    throw error;
  });
  // Orders of this file another batch queued (an earlier run, perhaps one that died) are followed too.
  const open = await followElsewhere(
    services.ledger,
    result.elsewhere.map((e) => e.orderKey),
    { reconcile, ...(deadline === undefined ? {} : { deadline }) },
  );
  const settled = batchSettled;
  const resultsPath = follow.resultsPath ?? outputPath(file, 'results');
  const results = await writeFollowedResults(imported, { resultsPath, settled, source });
  const followed: Followed = { batch, settled, results, resultsPath, ...state };
  lines.push(...followedLines(imported, followed));
  const attention =
    needsAttention({
      rejected: c.rejected,
      skippedHeld: c.skippedHeld,
      conflicts: c.conflicts,
      dead: batch.dead,
      held: batch.held,
    }) || resultsAttention(results, c.skippedRefused);
  const leftOpen = open > 0 || !isSettled(batch) || attention;
  const exitCode = settled ? settledExitCode(leftOpen) : ExitCode.infrastructure;
  const json = importJson({ file, kind: kind.name, result, guard }, followedJson(followed, open));
  return { result, batch, results, resultsPath, exitCode, report: lines.join('\n') + '\n', json };
}

/**
 * What the results file of a followed batch is made from: the records the import kept (none: the
 * input is read again), and, when it kept them in memory, their rows made while the batch settles.
 */
interface ResultsSource<P> {
  items: readonly RecordItem<P>[] | AsyncIterable<RecordItem<P>> | undefined;
  rows: ResultsRows<P> | undefined;
  /** For followBatch: makes the rows that can no longer change, each EARLY_ROWS_EVERY orders ended. */
  onRead: ((batch: Batch) => Promise<void>) | undefined;
  /** Frees the records kept (memory, a temp file). */
  dispose(): void;
}

async function resultsSource<P>(imported: Imported<P>): Promise<ResultsSource<P>> {
  const { file, options, services, logger, result, guard } = imported;
  const kept = result.kept;
  delete result.kept; // not held while the report is made, nor returned
  const items = await kept?.records();
  const dispose = () => kept?.dispose();
  // Only records kept in memory: early rows are held in memory too (a temp file's records are for a longer file).
  if (!Array.isArray(items)) return { items, rows: undefined, onRead: undefined, dispose };
  const rows = await ResultsRows.open(
    { file, ingest: options, batchId: result.batchId, ledger: services.ledger, kind: services.kind },
    { ...(guard?.prior === undefined ? {} : { prior: guard.prior }), items, csvOutput: services.files.csv },
  );
  let madeAt = 0;
  const onRead = async (batch: Batch): Promise<void> => {
    if (ended(batch) < madeAt + EARLY_ROWS_EVERY) return;
    madeAt = ended(batch);
    try {
      const made = await rows.early();
      logger.debug({ batchId: result.batchId, made, ended: madeAt }, 'results rows made while the batch settles');
    } catch (error) {
      // A look that fails (Redis busy or away) leaves its rows for the end, which reads them then.
      logger.debug({ err: error, batchId: result.batchId }, 'results rows left for the end');
    }
  };
  return { items, rows, onRead, dispose };
}

/** How a followed batch ended: the batch as last read, its results file, and what its watch found last. */
interface Followed extends WatchState {
  batch: Batch;
  settled: boolean;
  results: ResultsCounts;
  resultsPath: string;
}

/**
 * One look at a followed batch: why it may not move (breaker, pause, no worker, an unsafe Redis, its
 * canary's hold), said within seconds rather than never. Stops the following on a Redis that evicts.
 */
async function watchBatch<P>(imported: Imported<P>, state: WatchState): Promise<{ lines: string[]; pending: boolean }> {
  const { services, result } = imported;
  const kind = services.kind;
  const commands = { resume: `${kind.cli} resume`, worker: 'bulkorder worker' };
  const [health, view, circuit, safety, batchNow] = await Promise.all([
    readDeliveryHealth(services, services.delivery.breaker.alertAfterMs),
    readBreakerReport(services, services.delivery.breaker),
    readBatchCircuit(services.redis, services.keys, result.batchId),
    readRedisSafety(services),
    services.batches.get(result.batchId),
  ]);
  // A Redis that started evicting while this import waits: every worker pauses (their guard), and
  // keys of ours may vanish; waiting on could last for ever, and a re-run duplicate. Stop, naming it.
  if (safety.unsafe && safety.code === 'REDIS_EVICTION_POLICY')
    throw new InfrastructureError(
      'REDIS_EVICTION_POLICY',
      `${safety.reason ?? 'Redis evicts keys'}; stopped waiting for batch ${result.batchId}`,
    );
  if (circuit.state === 'held' && (circuit.probes ?? 0) >= 1) {
    state.heldBy = circuit;
    state.heldStop.abort();
  }
  const early = Date.now() - state.followStart < Math.min(NO_WORKER_GRACE_MS, WORKER_STALE_MS);
  const lines = describeHealth(health, commands);
  // The breaker's view under its line: what waits when open, and a failing API before it opens.
  lines.splice(view.state === 'closed' ? 0 : 1, 0, ...describeBreakerReport(view).map((line) => line.trim()));
  state.reasons = lines.filter((line) => !(early && line.startsWith('no worker')));
  if (safety.unsafe) state.reasons.unshift(`workers take no jobs (${safety.code ?? ''}): ${safety.reason ?? ''}`);
  // What it waits for, always said: orders not settled yet, and that one stuck `sending` is held, not waited on for ever.
  if (batchNow !== undefined && !isSettled(batchNow) && batchNow.importState !== 'importing')
    state.reasons.push(
      `waiting for the ${kind.noun}s of batch ${result.batchId} still queued or being sent (the progress line counts them); one left \`sending\` without a live job is held for review by a worker's reconciler (OUTCOME_UNKNOWN)`,
    );
  if (circuit.state === 'held')
    state.reasons.unshift(
      `batch held by its canary (BATCH_HELD): ${circuit.refusedCount} refused with ${circuit.cause ?? 'one cause'}; a probe follows; act: ${kind.cli} batch show|release|cancel ${result.batchId}`,
    );
  // An open breaker with a burst may send dead letters of this batch back: not settled yet.
  return { lines: state.reasons, pending: health.breaker.state !== 'closed' && health.burst > 0 };
}

/**
 * Writes the results file of a followed batch (from the records the import kept, when it kept them),
 * records it in the journal, and names it on the batch. Never over a ledger Redis lost meanwhile.
 */
async function writeFollowedResults<P>(
  imported: Imported<P>,
  written: { resultsPath: string; settled: boolean; source: ResultsSource<P> },
): Promise<ResultsCounts> {
  const { file, options, services, result, guard } = imported;
  const { resultsPath, settled, source } = written;
  const kind = services.kind;
  await guard?.assertKept(result.batchId); // never write "pending" over a results file for a ledger that is gone
  const results = await writeResults(
    { file, ingest: options, batchId: result.batchId, ledger: services.ledger, outPath: resultsPath, kind },
    {
      ...(guard?.prior === undefined ? {} : { prior: guard.prior }),
      ...(source.items === undefined ? {} : { items: source.items }),
      ...(source.rows === undefined ? {} : { rows: source.rows }),
      csvOutput: services.files.csv,
    },
  ).finally(() => source.dispose());
  await guard?.record(result.batchId, settled ? 'complete' : 'imported', {
    counts: { ...result.counts },
    resultsFile: resolve(resultsPath),
    resultsSha256: await fileSha256(resultsPath).catch(() => undefined),
  });
  await services.batches.setResultsFile(result.batchId, resolve(resultsPath));
  return results;
}

/** The report's lines on a followed batch: how it ended (or why it was given up), and its results file. */
function followedLines<P>(imported: Imported<P>, followed: Followed): string[] {
  const { services, result, follow } = imported;
  const { batch, settled, results, resultsPath, heldBy, reasons } = followed;
  const kind = services.kind;
  const lines: string[] = [];
  lines.push(
    ...(settled
      ? []
      : [
          heldBy !== undefined
            ? `  BATCH_HELD: its canary was refused with ${heldBy.cause ?? 'one cause'}${heldBy.message === undefined ? '' : ` (${heldBy.message})`} and its probe too; nothing more of it is sent. Fix the file and \`${kind.cli} batch cancel ${result.batchId}\`, or \`${kind.cli} batch release ${result.batchId}\` to send the rest`
            : `  gave up waiting after ${Math.round((follow.timeoutMs ?? 0) / 1000)} s (--max-wait): ${reasons.length === 0 ? `${kind.noun}s are still being delivered` : reasons.join('; ')}`,
        ]),
    `  ${settled ? 'settled' : 'still running (stopped following)'}: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held for review`,
    `  results: ${resultsPath}`,
    ...(kind.reportResults?.(results) ?? []),
  );
  if (batch.possibleDuplicates > 0)
    lines.push(
      `  ${batch.possibleDuplicates} of the delivered: ${POSSIBLE_DUPLICATE} (errorCode ${POSSIBLE_DUPLICATE_CODE} in the results file; check the service for a second copy)`,
    );
  if (batch.dead > 0 || batch.held > 0)
    lines.push(`  the results file gives each refused or held ${kind.noun}'s HTTP status, error code and message`);
  return lines;
}

/** A followed batch's facts for `--json`, beside those of its import (importJson). */
function followedJson(followed: Followed, open: number): Record<string, unknown> & { waited: boolean } {
  const { batch, settled, results, resultsPath, heldBy, reasons } = followed;
  return {
    waited: true,
    settled,
    delivery: {
      delivered: batch.delivered,
      dead: batch.dead,
      held: batch.held,
      possibleDuplicates: batch.possibleDuplicates,
    },
    stillOpenElsewhere: open,
    ...(settled ? {} : { gaveUpBecause: reasons }),
    ...(heldBy === undefined
      ? {}
      : {
          held: {
            code: 'BATCH_HELD',
            cause: heldBy.cause ?? null,
            status: heldBy.status ?? null,
            apiCode: heldBy.code ?? null,
            refused: heldBy.refusedCount,
          },
        }),
    resultsFile: resultsPath,
    results,
  };
}

/** The import states of the batches holding this file's other orders, and the workers running (for elsewhereLines). */
async function elsewhereFacts<P>(services: Services<P>, result: ImportResult): Promise<ElsewhereFacts | undefined> {
  if (result.elsewhere.length === 0) return undefined;
  const ids = [...new Set(result.elsewhere.map((e) => e.batchId))].slice(0, 20);
  const states = new Map<string, string>();
  for (const id of ids) {
    const batch = await services.batches.get(id);
    if (batch === undefined) continue;
    const state =
      batch.importState === 'failed' && batch.failure !== undefined
        ? `failed: ${batch.failure.code}`
        : batch.importState;
    states.set(id, state);
  }
  const workers = (await liveWorkers(services.redis, services.keys)).length;
  return { states, workers, workerCommand: 'bulkorder worker' };
}

/** What an import did, for `--json`: the report's facts under stable names (the exit code is added by the command). */
function importJson(
  what: { file: string; kind: string; result: ImportResult; guard: LedgerGuard | undefined },
  follow: Record<string, unknown> & { waited: boolean },
): Record<string, unknown> {
  const { file, kind, result, guard } = what;
  const summary = result.summary.toJSON();
  return {
    file,
    kind,
    batchId: result.batchId,
    counts: result.counts,
    rejectsFile: result.rejectsPath ?? null,
    errorKinds: summary.errorKinds,
    noteKinds: summary.noteKinds,
    identicalLines: result.identicalLines,
    refusedBefore: result.refusedBefore,
    queuedElsewhere: result.elsewhere,
    ...(guard === undefined
      ? {}
      : {
          journalFile: guard.written ? journalPath(file) : null,
          resultsLedger:
            guard.prior === undefined ? null : { file: guard.prior.path, delivered: guard.prior.delivered.size },
          ...(guard.lost === undefined
            ? {}
            : {
                ledgerLost: {
                  batchId: guard.lost.batchId,
                  importedAt: guard.lost.startedAt,
                  policy: guard.policy,
                },
              }),
        }),
    ...follow,
    ...(follow.waited ? {} : { resultsFile: null }),
  };
}

/**
 * What a journal that could not be written means for the run, by the state it was to record. The
 * journal goes beside the input, so a read-only input folder needs the file copied elsewhere.
 */
const journalThen = (noun: string): Readonly<Record<JournalEntry['state'], string>> => ({
  importing:
    'Nothing was queued. Run the same import again once it can be written (or copy the file to a folder this user can write and import it from there).',
  imported: `The ${noun}s read are queued and a running worker delivers them; run the same import again once it can be written: what was queued or delivered is not sent twice.`,
  complete:
    'The batch settled and its results file is written; run the same import with --wait again once it can be written: nothing is sent twice.',
});

/** What an import with the ledger guard holds: the results of an earlier run, the journal, and what it found. */
interface LedgerGuard {
  policy: LedgerLossPolicy;
  options: ImportOptions;
  prior: PriorResults | undefined;
  /** The journal entry of a ledger Redis forgot, when the policy let the import go on. */
  lost: JournalEntry | undefined;
  /** Whether the journal was written (a failure to write it stops the import, exit 5). */
  written: boolean;
  record(batchId: string, state: JournalEntry['state'], extra: Partial<JournalEntry>): Promise<void>;
  /** Throws LEDGER_LOST when the namespace's marker is gone or another one (Redis forgot while this import ran). */
  assertKept(batchId: string): Promise<void>;
}

/**
 * Issue 26: reads the journal and an earlier results file, refuses when Redis forgot this file's
 * ledger (LEDGER_LOST, unless the policy says otherwise), and returns the import options that
 * skip what the results file records as delivered and write the journal once the batch exists.
 */
async function openGuard<P>(
  file: string,
  options: ImportOptions,
  services: Services<P>,
  follow: FollowSettings,
): Promise<LedgerGuard> {
  const policy = follow.ledgerGuard?.policy ?? 'refuse';
  const resultsPath = follow.resultsPath ?? outputPath(file, 'results');
  let journal: ImportJournal | undefined = await readJournal(file);
  const earlier = journal?.imports.find((e) => e.target === services.keys.prefix);
  // Notes go to stderr at once, with or without --json (the report may never be printed).
  const note = (text: string) => (follow.out ?? process.stderr).write(`note: ${text}\n`);
  const found = policy === 'force' ? undefined : await readPriorResults(resultsPath, services.kind.results);
  // A results file is this target's ledger only when its journal entry names it, bytes and all: the
  // same input imported into acceptance and then production shares one results path.
  const vouched =
    found !== undefined &&
    earlier?.resultsFile === resolve(resultsPath) &&
    earlier.resultsSha256 !== undefined &&
    earlier.resultsSha256 === found.sha256;
  const prior = vouched ? found : undefined;
  if (found !== undefined && !vouched)
    note(
      `${resultsPath} is not named by this target's entry in ${journalPath(file)} (another target's, edited, or older than the journal): not read as a ledger`,
    );
  const marker = services.namespace.marker;
  const lost = checkLedger({
    file,
    journal,
    target: services.keys.prefix,
    marker,
    markerCreated: services.namespace.created,
    prior,
    resultsPath,
    policy,
    cli: services.kind.cli,
    noun: services.kind.noun,
  });
  const startedAt = new Date().toISOString();
  const guard: LedgerGuard = {
    policy,
    options: { ...options, ...(prior === undefined ? {} : { priorResults: prior }) },
    prior,
    lost,
    written: false,
    async record(batchId, state, extra) {
      journal = withEntry(file, journal, {
        // The results file this target's last run wrote stays its ledger until a run writes another.
        ...(earlier?.resultsFile === undefined
          ? {}
          : { resultsFile: earlier.resultsFile, resultsSha256: earlier.resultsSha256 }),
        target: services.keys.prefix,
        env: services.env,
        epoch: marker.epoch,
        batchId,
        startedAt,
        updatedAt: new Date().toISOString(),
        state,
        ...extra,
      });
      await writeJournal(file, journal, journalThen(services.kind.noun)[state]);
      guard.written = true;
    },
    async assertKept(batchId) {
      const now = await readNamespaceMarker(services.redis, services.keys);
      if (now?.epoch === marker.epoch) return;
      throw new LedgerLostError(
        `Redis lost this import's ledger while it ran: the namespace marker of ${services.keys.prefix} is ${now === undefined ? 'gone' : `another one (epoch ${now.epoch}, not ${marker.epoch})`}, as after a Redis restarted without persistence or flushed. What batch ${batchId} delivered before is recorded nowhere but the service; nothing more is sent by this import. ` +
          `Check the service, then import ${file} again with --trust-results (skips what a results file records as delivered) or --force (sends everything).`,
        {
          file,
          journal: journalPath(file),
          target: services.keys.prefix,
          batchId,
          journalEpoch: marker.epoch,
          namespaceEpoch: now?.epoch ?? null,
          markerWasMissing: now === undefined,
        },
      );
    },
  };
  guard.options.onBatchCreated = (batchId) => guard.record(batchId, 'importing', {});
  return guard;
}

/** A followed batch that settled exits 0, or needs-attention when anything is left open. */
function settledExitCode(leftOpen: boolean): ExitCode {
  return leftOpen ? ExitCode.needsAttention : ExitCode.ok;
}
