import { basename, dirname, join } from 'node:path';
import type { Config } from '../config.js';
import { redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { followBatch } from '../batches/followBatch.js';
import { isSettled, type Batch } from '../batches/batchStore.js';
import { writeResults, type ResultsCounts } from '../batches/writeResults.js';
import { importFile, type ImportOptions, type ImportResult } from '../importer/importFile.js';
import { openServices, type Services } from '../services.js';
import { DELIVER_ORDER } from '../../jobs/deliverOrder.js';
import { ingestOptionsFromFlags } from '../ingest/ingestFlags.js';
import type { ImportFlags } from './import.js';

/** `bulkorder import`: returns the exit code. */
export async function runImport(file: string, flags: ImportFlags, ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openServices({ redisUrl: ctx.config.redisUrl, prefix: redisPrefix(ctx.config), delivery: ctx.config.delivery });
  try {
    const options: ImportOptions = {
      ...(await ingestOptionsFromFlags(flags)),
      force: flags.force === true,
      ...(flags.rejects === undefined ? {} : { rejectsPath: flags.rejects }),
    };
    const outcome = await importAndFollow(file, options, services, ctx, {
      wait: flags.wait === true,
      ...(flags.results === undefined ? {} : { resultsPath: flags.results }),
      ...(flags.timeout === undefined ? {} : { timeoutMs: seconds(flags.timeout) * 1000 }),
    });
    process.stdout.write(outcome.report);
    return outcome.exitCode;
  } finally {
    await services.close();
  }
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
export async function importAndFollow(file: string, options: ImportOptions, services: Services, ctx: { config: Config; logger: Logger }, follow: FollowSettings): Promise<ImportOutcome> {
  const result = await importFile(file, options, {
    queue: services.queue,
    ledger: services.ledger,
    batches: services.batches,
    env: ctx.config.env,
    logger: ctx.logger,
    jobOptions: services.jobOptions,
    jobName: DELIVER_ORDER,
  });
  const c = result.counts;
  const lines = [
    `batch ${result.batchId}  ${file}`,
    `  rows ${c.rows}, orders ${c.orders}: ${c.valid} valid, ${c.rejected} rejected`,
    `  queued ${c.enqueued}; skipped: ${c.skippedDelivered} already delivered, ${c.skippedHeld} held for review, ${c.skippedQueued} queued by another batch`,
  ];
  if (result.rejectsPath !== undefined) lines.push(`  rejected rows: ${result.rejectsPath} (fix them there and import that file)`);
  let needsAttention = c.rejected > 0 || c.skippedHeld > 0;
  if (!follow.wait) {
    lines.push(`  follow it with: bulkorder status ${result.batchId}`);
    return { result, batch: undefined, results: undefined, resultsPath: undefined, exitCode: needsAttention ? ExitCode.needsAttention : ExitCode.ok, report: lines.join('\n') + '\n' };
  }

  const { batch, settled } = await followBatch(services.batches, result.batchId, { ...(follow.timeoutMs === undefined ? {} : { timeoutMs: follow.timeoutMs }) });
  const resultsPath = follow.resultsPath ?? join(dirname(file), `${basename(file).replace(/\.(csv|json|ndjson|txt)$/i, '')}.results.csv`);
  const results = await writeResults(file, options, result.batchId, services.ledger, resultsPath);
  lines.push(
    `  ${settled ? 'settled' : 'still running (stopped following)'}: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held for review`,
    `  results: ${resultsPath}`,
  );
  if (batch.dead > 0 || batch.held > 0) lines.push(`  the results file gives each refused or held order's HTTP status, error code and message`);
  needsAttention ||= batch.dead > 0 || batch.held > 0;
  const exitCode = !isSettled(batch) ? ExitCode.needsAttention : needsAttention ? ExitCode.needsAttention : ExitCode.ok;
  return { result, batch, results, resultsPath, exitCode, report: lines.join('\n') + '\n' };
}

function seconds(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError('USAGE', `--timeout must be a positive number of seconds, not '${text}'`);
  return value;
}
