import { outputPath } from '../ingest/outputPath.js';
import { followBatch } from '../batches/followBatch.js';
import { isSettled, needsAttention, type Batch } from '../batches/batchStore.js';
import { writeResults, type ResultsCounts } from '../batches/writeResults.js';
import { ExitCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { importFile, type ImportOptions, type ImportResult } from './importFile.js';

/** Whether and how to follow a batch after its import (`--wait`, `--results`, `--timeout`). */
export interface FollowSettings {
  wait: boolean;
  resultsPath?: string;
  timeoutMs?: number;
}

export interface ImportOutcome {
  result: ImportResult;
  batch: Batch | undefined;
  results: ResultsCounts | undefined;
  resultsPath: string | undefined;
  exitCode: number;
  report: string;
}

/**
 * Imports one file of the services' record kind and, when asked, follows it to the end and
 * writes its results file: what `import`, `accounts import` and the demo do. Returns the report
 * a person reads and the exit code (0, or 4 when something needs attention).
 */
export async function importAndFollow<P>(file: string, options: ImportOptions, services: Services<P>, logger: Logger, follow: FollowSettings): Promise<ImportOutcome> {
  const kind = services.kind;
  const result = await importFile(file, options, services.pipeline(logger));
  const c = result.counts;
  const lines = [
    `batch ${result.batchId}  ${file}`,
    `  rows ${c.rows}, ${kind.noun}s ${c.orders}: ${c.valid} valid, ${c.rejected} rejected`,
    `  queued ${c.enqueued}; skipped: ${c.skippedDelivered} already delivered, ${c.skippedHeld} held for review, ${c.skippedQueued} queued by another batch`,
  ];
  if (result.rejectsPath !== undefined) lines.push(`  rejected rows: ${result.rejectsPath} (fix them there and import that file)`);
  if (!follow.wait) {
    lines.push(`  follow it with: ${kind.cli} status ${result.batchId}`);
    const exitCode = needsAttention(c) ? ExitCode.needsAttention : ExitCode.ok;
    return { result, batch: undefined, results: undefined, resultsPath: undefined, exitCode, report: lines.join('\n') + '\n' };
  }

  const { batch, settled } = await followBatch(services.batches, result.batchId, { ...(follow.timeoutMs === undefined ? {} : { timeoutMs: follow.timeoutMs }) });
  const resultsPath = follow.resultsPath ?? outputPath(file, 'results');
  const results = await writeResults(file, options, result.batchId, services.ledger, resultsPath, kind);
  lines.push(
    `  ${settled ? 'settled' : 'still running (stopped following)'}: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held for review`,
    `  results: ${resultsPath}`,
    ...(kind.reportResults?.(results) ?? []),
  );
  if (batch.dead > 0 || batch.held > 0) lines.push(`  the results file gives each refused or held ${kind.noun}'s HTTP status, error code and message`);
  const attention = needsAttention({ rejected: c.rejected, skippedHeld: c.skippedHeld, dead: batch.dead, held: batch.held });
  const exitCode = !isSettled(batch) || attention ? ExitCode.needsAttention : ExitCode.ok;
  return { result, batch, results, resultsPath, exitCode, report: lines.join('\n') + '\n' };
}
