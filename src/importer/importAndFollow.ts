import { resolve } from 'node:path';
import { outputPath } from '../ingest/outputPath.js';
import type { TextSink } from '../textSink.js';
import { followBatch } from '../batches/followBatch.js';
import { isSettled, needsAttention, type Batch } from '../batches/batchStore.js';
import { POSSIBLE_DUPLICATE_CODE, writeResults } from '../batches/writeResults.js';
import type { ResultsCounts } from '../kinds/resultsLayout.js';
import { POSSIBLE_DUPLICATE } from '../ledger/ledger.js';
import { describeHealth, readDeliveryHealth } from '../services/deliveryControl.js';
import { describeBreakerReport, readBreakerReport } from '../services/breakerReport.js';
import { WORKER_STALE_MS } from '../worker/workerPresence.js';

import { ExitCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { importFile, type ImportOptions, type ImportResult } from './importFile.js';
import { followElsewhere } from './followElsewhere.js';
import { elsewhereLines, importAttention, resultsAttention } from './importVerdict.js';
import { reconcileImports } from './reconcileImports.js';
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
 * With --wait, an import keeps the records it read, up to this many, for the results file: a
 * 5,000-order file then skips a second read and validation at the end (~400 of the results file's
 * ~1,000 CPU-ms, profiled); memory grows by the records held (not measured); a longer file is read again as before.
 */
const RESULTS_ITEMS_KEPT = 10_000;
/**
 * How often --wait reads its batch: its end is seen within this. A batch read is one HGETALL
 * (10 a second cost the importer and Redis well under 1% of a core); at followBatch's default of
 * 500 ms, a run ended on average 250 ms after its last order settled.
 */
const FOLLOW_POLL_MS = 100;

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

/**
 * Imports one file of the services' record kind and, when asked, follows it to the end and
 * writes its results file: what `import`, `accounts import` and the demo do. Returns the report
 * a person reads and the exit code (0; 4 when something needs attention; 5 when --max-wait ran out).
 */
export async function importAndFollow<P>(
  file: string,
  options: ImportOptions,
  services: Services<P>,
  logger: Logger,
  follow: FollowSettings,
): Promise<ImportOutcome> {
  const kind = services.kind;
  const reconcile = () =>
    reconcileImports({
      ledger: services.ledger,
      batches: services.batches,
      queue: services.queue,
      jobOptions: services.jobOptions,
      logger,
    });
  await reconcile(); // an earlier run that died: queue what it reserved, close its batch
  const guard = follow.ledgerGuard === undefined ? undefined : await openGuard(file, options, services, follow);
  const result = await importFile(
    file,
    { ...(guard?.options ?? options), ...(follow.wait ? { keepItems: RESULTS_ITEMS_KEPT } : {}) },
    services.pipeline(logger),
  );
  await guard?.record(result.batchId, 'imported', { counts: { ...result.counts } });
  const c = result.counts;
  const lines = [
    `batch ${result.batchId}  ${file}`,
    `  rows ${c.rows}, ${kind.noun}s ${c.orders}: ${c.valid} valid, ${c.rejected} rejected`,
    `  queued ${c.enqueued}; skipped: ${c.skippedDelivered} already delivered, ${c.skippedHeld} held for review, ${c.skippedQueued} queued by another batch`,
  ];
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
  if (!follow.wait) {
    lines.push(...elsewhereLines(result, kind.noun));
    lines.push(`  follow it with: ${kind.cli} status ${result.batchId}`);
    // Orders left to another batch are not done: pending, exit 4 (--wait follows them to their end).
    const exitCode = needsAttention(c) || result.elsewhere.length > 0 ? ExitCode.needsAttention : ExitCode.ok;
    const json = importJson(file, kind.name, result, { waited: false }, guard);
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

  const deadline = follow.timeoutMs === undefined ? undefined : Date.now() + follow.timeoutMs;
  // Why the batch may not move (breaker, pause, no worker), said within seconds rather than never.
  const commands = { resume: `${kind.cli} resume`, worker: 'bulkorder worker' };
  const followStart = Date.now();
  let reasons: string[] = [];
  const watch = async () => {
    const [health, view] = await Promise.all([
      readDeliveryHealth(services, services.delivery.breaker.alertAfterMs),
      readBreakerReport(services, services.delivery.breaker),
    ]);
    const early = Date.now() - followStart < Math.min(NO_WORKER_GRACE_MS, WORKER_STALE_MS);
    const lines = describeHealth(health, commands);
    // The breaker's view under its line: what waits when open, and a failing API before it opens.
    lines.splice(view.state === 'closed' ? 0 : 1, 0, ...describeBreakerReport(view).map((line) => line.trim()));
    reasons = lines.filter((line) => !(early && line.startsWith('no worker')));
    // An open breaker with a burst may send dead letters of this batch back: not settled yet.
    return { lines: reasons, pending: health.breaker.state !== 'closed' && health.burst > 0 };
  };
  const guardedWatch = async () => {
    await guard?.assertKept(result.batchId);
    return watch();
  };
  const { batch, settled: batchSettled } = await followBatch(services.batches, result.batchId, {
    watch: guard === undefined ? watch : guardedWatch,
    pollMs: FOLLOW_POLL_MS,
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
  await guard?.assertKept(result.batchId); // never write "pending" over a results file for a ledger that is gone
  const results = await writeResults(
    file,
    options,
    result.batchId,
    services.ledger,
    resultsPath,
    kind,
    guard?.prior,
    result.items,
  );
  delete result.items; // not held while the report is made, nor returned
  await guard?.record(result.batchId, settled ? 'complete' : 'imported', {
    counts: { ...result.counts },
    resultsFile: resolve(resultsPath),
    resultsSha256: await fileSha256(resultsPath).catch(() => undefined),
  });
  if (follow.resultsPath !== undefined) await services.batches.setResultsFile(result.batchId, resolve(resultsPath));
  lines.push(
    ...(settled
      ? []
      : [
          `  gave up waiting after ${Math.round((follow.timeoutMs ?? 0) / 1000)} s (--max-wait): ${reasons.length === 0 ? `${kind.noun}s are still being delivered` : reasons.join('; ')}`,
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
  const attention =
    needsAttention({
      rejected: c.rejected,
      skippedHeld: c.skippedHeld,
      conflicts: c.conflicts,
      dead: batch.dead,
      held: batch.held,
    }) || resultsAttention(results);
  const exitCode = !settled
    ? ExitCode.infrastructure
    : open > 0 || !isSettled(batch) || attention
      ? ExitCode.needsAttention
      : ExitCode.ok;
  const json = importJson(
    file,
    kind.name,
    result,
    {
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
      resultsFile: resultsPath,
      results,
    },
    guard,
  );
  return { result, batch, results, resultsPath, exitCode, report: lines.join('\n') + '\n', json };
}

/** What an import did, for `--json`: the report's facts under stable names (the exit code is added by the command). */
function importJson(
  file: string,
  kind: string,
  result: ImportResult,
  follow: Record<string, unknown> & { waited: boolean },
  guard: LedgerGuard | undefined,
): Record<string, unknown> {
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

/** What an import with the ledger guard holds: the results of an earlier run, the journal, and what it found. */
interface LedgerGuard {
  policy: LedgerLossPolicy;
  options: ImportOptions;
  prior: PriorResults | undefined;
  /** The journal entry of a ledger Redis forgot, when the policy let the import go on. */
  lost: JournalEntry | undefined;
  /** Whether the journal could be written (a read-only folder: not). */
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
  let journalNoted = false;
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
      const error = await writeJournal(file, journal);
      if (error === undefined) guard.written = true;
      else if (!journalNoted) {
        journalNoted = true;
        note(
          `the import journal ${journalPath(file)} could not be written (${(error as NodeJS.ErrnoException).code ?? error.message}): a Redis that forgets its data will not be noticed for this file`,
        );
      }
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
