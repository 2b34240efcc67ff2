import type { Config } from '../config.js';
import { redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isSettled, type Batch } from '../batches/batchStore.js';
import { progressLine } from '../batches/followBatch.js';
import { openServices } from '../services.js';
import { CircuitBreaker } from '../worker/circuitBreaker.js';
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
    const breaker = new CircuitBreaker(services.redis, services.keys, async () => undefined, ctx.logger);
    const [queue, paused, trip, dead, held] = await Promise.all([
      services.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
      services.queue.isPaused(),
      breaker.trip(),
      services.redis.zcard(services.keys.parkedIndex('dead')),
      services.redis.zcard(services.keys.parkedIndex('held')),
    ]);
    const report = { env: ctx.config.env, queue: { ...queue, paused }, breaker: trip ?? null, deadLetters: dead, heldForReview: held, batches: batches.map((b) => ({ ...b, settled: isSettled(b) })) };
    if (flags.json === true) {
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    } else {
      const lines = [
        `environment ${ctx.config.env}; queue: ${queue.waiting ?? 0} waiting, ${queue.active ?? 0} active, ${queue.delayed ?? 0} delayed${paused ? ' (PAUSED)' : ''}`,
        `dead letters: ${dead}; held for review: ${held}`,
      ];
      if (trip !== undefined) lines.push(`circuit breaker TRIPPED at ${new Date(trip.at).toISOString()}: ${trip.reason}`, '  fix the cause, then: bulkorder resume');
      for (const b of batches) {
        lines.push(
          '',
          `${b.id}  ${b.file}  ${new Date(b.startedAt).toISOString()}  ${b.importState}${isSettled(b) ? ', settled' : ''}`,
          `  rows ${b.rows}, orders ${b.orders}: ${b.valid} valid, ${b.rejected} rejected; queued ${b.enqueued}; skipped ${b.skippedDelivered} delivered, ${b.skippedHeld} held, ${b.skippedQueued} queued elsewhere${b.conflicts > 0 ? `; ${b.conflicts} not sent: ORDER_REF_REUSED` : ''}`,
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

/** `bulkorder resume`: clears the breaker and resumes the queue. */
export async function runResume(ctx: { config: Config; logger: Logger }): Promise<number> {
  const services = await openServices({ redisUrl: ctx.config.redisUrl, prefix: redisPrefix(ctx.config), delivery: ctx.config.delivery });
  try {
    const breaker = new CircuitBreaker(services.redis, services.keys, async () => undefined, ctx.logger);
    const trip = await breaker.trip();
    await breaker.reset();
    await services.queue.resume();
    process.stdout.write(trip === undefined ? 'delivery resumed (the breaker was not tripped)\n' : `delivery resumed; the breaker had tripped: ${trip.reason}\n`);
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}
