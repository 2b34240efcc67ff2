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

/** A worker may take a moment to register: "no worker is running" only after this. */
const NO_WORKER_GRACE_MS = 3000;
import { ExitCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { importFile, type ImportOptions, type ImportResult } from './importFile.js';
import { followElsewhere } from './followElsewhere.js';
import { elsewhereLines, importAttention, resultsAttention } from './importVerdict.js';
import { reconcileImports } from './reconcileImports.js';

/** Whether and how to follow a batch after its import (`--wait`, `--results`, `--max-wait`). */
export interface FollowSettings {
  wait: boolean;
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
  const result = await importFile(file, options, services.pipeline(logger));
  const c = result.counts;
  const lines = [
    `batch ${result.batchId}  ${file}`,
    `  rows ${c.rows}, ${kind.noun}s ${c.orders}: ${c.valid} valid, ${c.rejected} rejected`,
    `  queued ${c.enqueued}; skipped: ${c.skippedDelivered} already delivered, ${c.skippedHeld} held for review, ${c.skippedQueued} queued by another batch`,
  ];
  lines.push(...importAttention(result, kind.noun));
  if (result.rejectsPath !== undefined)
    lines.push(`  rejected rows: ${result.rejectsPath} (fix them there and import that file)`);
  if (!follow.wait) {
    lines.push(...elsewhereLines(result, kind.noun));
    lines.push(`  follow it with: ${kind.cli} status ${result.batchId}`);
    // Orders left to another batch are not done: pending, exit 4 (--wait follows them to their end).
    const exitCode = needsAttention(c) || result.elsewhere.length > 0 ? ExitCode.needsAttention : ExitCode.ok;
    const json = importJson(file, kind.name, result, { waited: false });
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
  const { batch, settled: batchSettled } = await followBatch(services.batches, result.batchId, {
    watch,
    ...(follow.out === undefined ? {} : { out: follow.out }),
    ...(follow.timeoutMs === undefined ? {} : { timeoutMs: follow.timeoutMs }),
  });
  // Orders of this file another batch queued (an earlier run, perhaps one that died) are followed too.
  const open = await followElsewhere(
    services.ledger,
    result.elsewhere.map((e) => e.orderKey),
    { reconcile, ...(deadline === undefined ? {} : { deadline }) },
  );
  const settled = batchSettled;
  const resultsPath = follow.resultsPath ?? outputPath(file, 'results');
  const results = await writeResults(file, options, result.batchId, services.ledger, resultsPath, kind);
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
  const json = importJson(file, kind.name, result, {
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
  });
  return { result, batch, results, resultsPath, exitCode, report: lines.join('\n') + '\n', json };
}

/** What an import did, for `--json`: the report's facts under stable names (the exit code is added by the command). */
function importJson(
  file: string,
  kind: string,
  result: ImportResult,
  follow: Record<string, unknown> & { waited: boolean },
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
    ...follow,
    ...(follow.waited ? {} : { resultsFile: null }),
  };
}
