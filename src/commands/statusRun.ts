import type { Config } from '../config.js';
import { redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isSettled, type Batch } from '../batches/batchStore.js';
import { progressLine } from '../batches/followBatch.js';
import { openServices } from '../services.js';
import { describeHealth, pauseDelivery, readDeliveryHealth, resumeDelivery } from '../worker/deliveryControl.js';
import { DELIVER_ORDER } from '../../jobs/deliverOrder.js';
import type { OrderPayload } from '../ingest/types.js';
import type { StatusFlags } from './status.js';

/** `bulkorder status`. */
export async function runStatus(batchId: string | undefined, flags: StatusFlags, ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openServices({ redisUrl: ctx.config.redisUrl, prefix: redisPrefix(ctx.config), delivery: ctx.config.delivery });
  try {
    let batches: Batch[];
    if (batchId === undefined) batches = await services.batches.list(Number(flags.limit ?? 10));
    else {
      const batch = await services.batches.get(batchId);
      if (batch === undefined) throw new UsageError('BATCH_NOT_FOUND', `no batch ${batchId} in ${ctx.config.env} (bulkorder status lists recent ones)`);
      batches = [batch];
    }
    const [queue, health, dead, held] = await Promise.all([
      services.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
      readDeliveryHealth(services, ctx.config.delivery.breaker.alertAfterMs),
      services.redis.zcard(services.keys.parkedIndex('dead')),
      services.redis.zcard(services.keys.parkedIndex('held')),
    ]);
    const paused = health.paused;
    const report = { env: ctx.config.env, queue: { ...queue, paused, pausedBy: health.pausedBy ?? null }, breaker: health.breaker, workers: health.workers, deadLetters: dead, heldForReview: held, batches: batches.map((b) => ({ ...b, settled: isSettled(b) })) };
    if (flags.json === true) {
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    } else {
      const lines = [
        `environment ${ctx.config.env}; queue: ${queue.waiting ?? 0} waiting, ${queue.active ?? 0} active, ${queue.delayed ?? 0} delayed${paused ? ' (PAUSED)' : ''}`,
        `dead letters: ${dead}; held for review: ${held}`,
      ];
      lines.push(`circuit breaker ${health.breaker.state}`, ...describeHealth(health, { resume: 'bulkorder resume', worker: 'bulkorder worker' }, { showWorkers: true }));
      for (const b of batches) {
        lines.push(
          '',
          `${b.id}  ${b.file}  ${new Date(b.startedAt).toISOString()}  ${b.importState}${isSettled(b) ? ', settled' : ''}`,
          `  rows ${b.rows}, orders ${b.orders}: ${b.valid} valid, ${b.rejected} rejected; queued ${b.enqueued}; skipped ${b.skippedDelivered} delivered, ${b.skippedHeld} held, ${b.skippedQueued} queued elsewhere`,
          `  ${progressLine(b)}`,
        );
      }
      if (batches.length === 0) lines.push('', 'no batches yet: bulkorder import <file>');
      process.stdout.write(lines.join('\n') + '\n');
    }
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}

/** `bulkorder resume`: clears a manual pause and the breaker (requeueing its burst) and resumes the queue. */
export async function runResume(ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openServices({ redisUrl: ctx.config.redisUrl, prefix: redisPrefix(ctx.config), delivery: ctx.config.delivery });
  try {
    const done = await resumeDelivery<OrderPayload>(services, { settings: ctx.config.delivery.breaker, jobName: DELIVER_ORDER, logger: ctx.logger });
    const was = [done.pausedBy === undefined ? '' : `paused by ${done.pausedBy.by}`, done.breaker.state === 'closed' ? '' : `breaker ${done.breaker.state}: ${done.breaker.reason ?? ''}`].filter((t) => t !== '');
    process.stdout.write(`delivery resumed${was.length === 0 ? '' : ` (it was ${was.join('; ')})`}${done.requeued > 0 ? `; ${done.requeued} dead letters of the breaker's burst queued again` : ''}\n`);
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}

/** `bulkorder pause`: pauses delivery for every worker until `bulkorder resume`; the breaker never resumes it. */
export async function runPause(ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openServices({ redisUrl: ctx.config.redisUrl, prefix: redisPrefix(ctx.config), delivery: ctx.config.delivery });
  try {
    const record = await pauseDelivery(services);
    process.stdout.write(`delivery paused by ${record.by}; requests in flight finish. Undo with: bulkorder resume\n`);
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}
