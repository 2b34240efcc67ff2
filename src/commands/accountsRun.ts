import type { Config } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isSettled, type Batch } from '../batches/batchStore.js';
import { progressLine } from '../batches/followBatch.js';
import { describeHealth, readDeliveryHealth, resumeDelivery } from '../worker/deliveryControl.js';
import { ACCOUNT_COLUMNS, type AccountPayload } from '../accounts/accountColumns.js';
import { REGISTER_ACCOUNT } from '../accounts/accountJob.js';
import { ACCOUNT_RESULTS } from '../accounts/accountResults.js';
import { openAccountServices } from '../accounts/accountServices.js';
import { openAccountSource } from '../accounts/openAccountSource.js';
import { followFromFlags, importAndFollow, importOptionsFromFlags, type ImportKind } from './importRun.js';
import type { ImportFlags } from './import.js';
import type { ValidateFlags } from './accounts.js';
import { ingestOptionsFromFlags } from '../ingest/ingestFlags.js';
import { validateFile } from '../ingest/validateFile.js';
import { validationReport } from '../ingest/validationReport.js';

/** Employee accounts: `bulkorder accounts import`. */
export const ACCOUNT_IMPORT: ImportKind<AccountPayload> = {
  noun: 'account',
  jobName: REGISTER_ACCOUNT,
  openSource: openAccountSource,
  results: ACCOUNT_RESULTS,
  statusCommand: 'bulkorder accounts status',
  reportResults(results) {
    const exists = results.byOutcome['account-exists'] ?? 0;
    return exists === 0 ? [] : [`  ${exists} account${exists === 1 ? '' : 's'} already existed on the service (account-exists): not registered again, customerId unknown here`];
  },
};

/** `bulkorder accounts validate`: the dry run of an employee file, as `validate` is for orders. */
export async function runAccountsValidate(file: string, flags: ValidateFlags): Promise<number> {
  const options = { ...(await ingestOptionsFromFlags(flags, ACCOUNT_COLUMNS)), ...(flags.out === undefined ? {} : { out: flags.out }) };
  const result = await validateFile(file, options, { open: openAccountSource, noun: 'account' });
  process.stdout.write(validationReport(file, result, flags.json === true));
  return result.exitCode;
}

/** `bulkorder accounts import`: returns the exit code (the same codes as `import`). */
export async function runAccountsImport(file: string, flags: ImportFlags, ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openAccountServices(ctx.config);
  try {
    if (ctx.config.credentials.cafetariaplan === undefined) {
      // Importing needs no credentials, but only a worker that has them registers accounts.
      process.stderr.write('note: no Cafetariaplan credentials here (BULKORDER_CAFETARIAPLAN_CLIENT_ID/_SECRET): accounts are queued, and a `bulkorder worker` that has them registers them.\n');
    }
    const outcome = await importAndFollow(file, await importOptionsFromFlags(flags, ACCOUNT_COLUMNS), services, ctx, followFromFlags(flags), ACCOUNT_IMPORT);
    process.stdout.write(outcome.report);
    return outcome.exitCode;
  } finally {
    await services.close();
  }
}

/** `bulkorder accounts status`. */
export async function runAccountsStatus(batchId: string | undefined, flags: { json?: boolean }, ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openAccountServices(ctx.config);
  try {
    let batches: Batch[];
    if (batchId === undefined) batches = await services.batches.list(10);
    else {
      const batch = await services.batches.get(batchId);
      if (batch === undefined) throw new UsageError('BATCH_NOT_FOUND', `no account batch ${batchId} in ${ctx.config.env} (bulkorder accounts status lists recent ones)`);
      batches = [batch];
    }
    const [queue, health, dead, held] = await Promise.all([
      services.queue.getJobCounts('waiting', 'active', 'delayed'),
      readDeliveryHealth(services, ctx.config.delivery.breaker.alertAfterMs),
      services.redis.zcard(services.keys.parkedIndex('dead')),
      services.redis.zcard(services.keys.parkedIndex('held')),
    ]);
    const paused = health.paused;
    if (flags.json === true) {
      const report = { env: ctx.config.env, queue: { ...queue, paused, pausedBy: health.pausedBy ?? null }, breaker: health.breaker, workers: health.workers, deadLetters: dead, heldForReview: held, batches: batches.map((b) => ({ ...b, settled: isSettled(b) })) };
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
      return ExitCode.ok;
    }
    const lines = [
      `environment ${ctx.config.env}; accounts queue: ${queue.waiting ?? 0} waiting, ${queue.active ?? 0} active, ${queue.delayed ?? 0} delayed${paused ? ' (PAUSED)' : ''}`,
      `account dead letters: ${dead}; held for review: ${held}`,
    ];
    lines.push(`circuit breaker ${health.breaker.state}`, ...describeHealth(health, { resume: 'bulkorder accounts resume', worker: 'bulkorder worker' }, { showWorkers: true }));
    for (const b of batches) {
      lines.push('', `${b.id}  ${b.file}  ${new Date(b.startedAt).toISOString()}  ${b.importState}${isSettled(b) ? ', settled' : ''}`, `  ${progressLine(b)}`);
    }
    if (batches.length === 0) lines.push('', 'no account batches yet: bulkorder accounts import <file>');
    process.stdout.write(lines.join('\n') + '\n');
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}

/** `bulkorder accounts resume`: clears the accounts' pause and breaker (requeueing its burst) and resumes their queue. */
export async function runAccountsResume(ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openAccountServices(ctx.config);
  try {
    const done = await resumeDelivery(services, { settings: ctx.config.delivery.breaker, jobName: REGISTER_ACCOUNT, logger: ctx.logger });
    process.stdout.write(done.breaker.state === 'closed' ? 'account registration resumed (the breaker was closed)\n' : `account registration resumed; the breaker was ${done.breaker.state}: ${done.breaker.reason ?? ''}\n`);
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}
