import { basename, dirname, join } from 'node:path';
import type { Config } from '../config.js';
import { redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { followBatch } from '../batches/followBatch.js';
import { isSettled, type Batch } from '../batches/batchStore.js';
import { ORDER_RESULTS, writeResults, type ResultsCounts, type ResultsLayout } from '../batches/writeResults.js';
import { importFile, type ImportOptions, type ImportResult } from '../importer/importFile.js';
import { reconcileImports } from '../importer/reconcileImports.js';
import { elsewhereLines, importAttention, resultsAttention } from '../importer/importVerdict.js';
import { followElsewhere } from '../importer/followElsewhere.js';
import { openServices, type Services } from '../services.js';
import { DELIVER_ORDER } from '../../jobs/deliverOrder.js';
import { ingestOptionsFromFlags } from '../ingest/ingestFlags.js';
import { openOrderSource } from '../ingest/openOrderSource.js';
import type { IngestOptions, RecordSource } from '../ingest/openRecordSource.js';
import type { OrderPayload } from '../ingest/types.js';
import type { DeliveryJobData } from '../orderJob.js';
import type { ImportFlags } from './import.js';

/**
 * What `import` and `accounts import` do differently: the record kind's reader, job name and
 * results layout, and the words of the report. Everything else (ledger reservation, batches,
 * following, results, exit codes) is the same code.
 */
export interface ImportKind<P> {
  /** `order` or `account`. */
  noun: string;
  jobName: string;
  openSource(file: string, options: IngestOptions): Promise<RecordSource<P>>;
  results: ResultsLayout<P>;
  /** The command that shows a batch's progress, e.g. `bulkorder status`. */
  statusCommand: string;
  /** Lines about outcomes only this kind has (accounts: how many already existed). */
  reportResults?(results: ResultsCounts): string[];
}

/** Orders: `bulkorder import`. */
export const ORDER_IMPORT: ImportKind<OrderPayload> = {
  noun: 'order',
  jobName: DELIVER_ORDER,
  openSource: openOrderSource,
  results: ORDER_RESULTS,
  statusCommand: 'bulkorder status',
};

/** `bulkorder import`: returns the exit code. */
export async function runImport(file: string, flags: ImportFlags, ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openServices({ redisUrl: ctx.config.redisUrl, prefix: redisPrefix(ctx.config), delivery: ctx.config.delivery });
  try {
    const outcome = await importAndFollow(file, await importOptionsFromFlags(flags), services, ctx, followFromFlags(flags));
    process.stdout.write(outcome.report);
    return outcome.exitCode;
  } finally {
    await services.close();
  }
}

/** ImportOptions from the flags `import` and `accounts import` share; --map is checked against `columns`' fields. */
export async function importOptionsFromFlags(flags: ImportFlags, columns?: Parameters<typeof ingestOptionsFromFlags>[1]): Promise<ImportOptions> {
  return {
    ...(await ingestOptionsFromFlags(flags, columns)),
    force: flags.force === true,
    ...(flags.rejects === undefined ? {} : { rejectsPath: flags.rejects }),
  };
}

/** FollowSettings from --wait, --results and --timeout. */
export function followFromFlags(flags: ImportFlags): FollowSettings {
  return {
    wait: flags.wait === true,
    ...(flags.results === undefined ? {} : { resultsPath: flags.results }),
    ...(flags.timeout === undefined ? {} : { timeoutMs: seconds(flags.timeout) * 1000 }),
  };
}

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

/** Imports one file and, when asked, follows it to the end and writes its results file. */
export async function importAndFollow<P = OrderPayload>(
  file: string,
  options: ImportOptions,
  services: Services<DeliveryJobData<P>>,
  ctx: { config: Config; logger: Logger },
  follow: FollowSettings,
  kind: ImportKind<P> = ORDER_IMPORT as unknown as ImportKind<P>,
): Promise<ImportOutcome> {
  const reconcile = () => reconcileImports({ ledger: services.ledger, batches: services.batches, queue: services.queue, jobOptions: services.jobOptions, logger: ctx.logger });
  await reconcile(); // an earlier run that died: queue what it reserved, close its batch
  const result = await importFile<P>(file, options, {
    queue: services.queue,
    ledger: services.ledger,
    batches: services.batches,
    env: ctx.config.env,
    logger: ctx.logger,
    jobOptions: services.jobOptions,
    jobName: kind.jobName,
    openSource: kind.openSource,
    noun: kind.noun,
  });
  const c = result.counts;
  const lines = [
    `batch ${result.batchId}  ${file}`,
    `  rows ${c.rows}, ${kind.noun}s ${c.orders}: ${c.valid} valid, ${c.rejected} rejected`,
    `  queued ${c.enqueued}; skipped: ${c.skippedDelivered} already delivered, ${c.skippedHeld} held for review, ${c.skippedQueued} queued by another batch`,
  ];
  lines.push(...importAttention(result, kind.noun));
  if (result.rejectsPath !== undefined) lines.push(`  rejected rows: ${result.rejectsPath} (fix them there and import that file)`);
  let needsAttention = c.rejected > 0 || c.skippedHeld > 0 || c.conflicts > 0;
  if (!follow.wait) {
    lines.push(...elsewhereLines(result, kind.noun));
    lines.push(`  follow it with: ${kind.statusCommand} ${result.batchId}`);
    // Orders left to another batch are not done: pending, exit 4 (--wait follows them to their end).
    needsAttention ||= result.elsewhere.length > 0;
    return { result, batch: undefined, results: undefined, resultsPath: undefined, exitCode: needsAttention ? ExitCode.needsAttention : ExitCode.ok, report: lines.join('\n') + '\n' };
  }

  const deadline = follow.timeoutMs === undefined ? undefined : Date.now() + follow.timeoutMs;
  const followed = await followBatch(services.batches, result.batchId, { ...(follow.timeoutMs === undefined ? {} : { timeoutMs: follow.timeoutMs }) });
  const { batch } = followed;
  const open = await followElsewhere(services.ledger, result.elsewhere.map((e) => e.orderKey), { reconcile, ...(deadline === undefined ? {} : { deadline }) });
  const settled = followed.settled && open === 0;
  const resultsPath = follow.resultsPath ?? join(dirname(file), `${basename(file).replace(/\.(csv|json|ndjson|txt)$/i, '')}.results.csv`);
  const results = await writeResults(file, options, result.batchId, services.ledger, resultsPath, kind.results);
  lines.push(
    `  ${settled ? 'settled' : 'still running (stopped following)'}: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held for review`,
    `  results: ${resultsPath}`,
    ...(kind.reportResults?.(results) ?? []),
  );
  if (batch.dead > 0 || batch.held > 0) lines.push(`  the results file gives each refused or held ${kind.noun}'s HTTP status, error code and message`);
  needsAttention ||= batch.dead > 0 || batch.held > 0 || resultsAttention(results);
  const exitCode = !settled || !isSettled(batch) ? ExitCode.needsAttention : needsAttention ? ExitCode.needsAttention : ExitCode.ok;
  return { result, batch, results, resultsPath, exitCode, report: lines.join('\n') + '\n' };
}

function seconds(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError('USAGE', `--timeout must be a positive number of seconds, not '${text}'`);
  return value;
}
