import { UsageError } from '../errors.js';
import type { Services } from '../services.js';
import { breakerTrip, resetBreaker } from '../worker/circuitBreaker.js';
import { progressLine } from './followBatch.js';
import { isSettled, type Batch } from './batchStore.js';

/** Words that set one kind's status apart: `queue` / `accounts queue`, `dead letters` / `account dead letters`. */
function own<P>(services: Services<P>): { queue: string; thing: string } {
  const orders = services.kind.name === 'orders';
  return { queue: orders ? 'queue' : `${services.kind.name} queue`, thing: orders ? '' : `${services.kind.noun} ` };
}

/**
 * `bulkorder status` and `bulkorder accounts status`, written once: a kind's batches, its queue,
 * its circuit breaker and its parked records, as text or JSON.
 */
export async function queueStatus<P>(services: Services<P>, options: { batchId?: string; limit?: number; json?: boolean }): Promise<string> {
  const { kind, env } = services;
  const words = own(services);
  let batches: Batch[];
  if (options.batchId === undefined) batches = await services.batches.list(options.limit ?? 10);
  else {
    const batch = await services.batches.get(options.batchId);
    if (batch === undefined) throw new UsageError('BATCH_NOT_FOUND', `no ${words.thing}batch ${options.batchId} in ${env} (${kind.cli} status lists recent ones)`);
    batches = [batch];
  }
  const [queue, paused, trip, dead, held] = await Promise.all([
    services.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
    services.queue.isPaused(),
    breakerTrip(services.redis, services.keys),
    services.redis.zcard(services.keys.parkedIndex('dead')),
    services.redis.zcard(services.keys.parkedIndex('held')),
  ]);
  if (options.json === true) {
    const report = { env, queue: { ...queue, paused }, breaker: trip ?? null, deadLetters: dead, heldForReview: held, batches: batches.map((b) => ({ ...b, settled: isSettled(b) })) };
    return JSON.stringify(report, null, 2) + '\n';
  }
  const lines = [
    `environment ${env}; ${words.queue}: ${queue.waiting ?? 0} waiting, ${queue.active ?? 0} active, ${queue.delayed ?? 0} delayed${paused ? ' (PAUSED)' : ''}`,
    `${words.thing}dead letters: ${dead}; held for review: ${held}`,
  ];
  if (trip !== undefined) lines.push(`circuit breaker TRIPPED at ${new Date(trip.at).toISOString()}: ${trip.reason}`, `  fix the cause, then: ${kind.cli} resume`);
  for (const b of batches) {
    lines.push(
      '',
      `${b.id}  ${b.file}  ${new Date(b.startedAt).toISOString()}  ${b.importState}${isSettled(b) ? ', settled' : ''}`,
      `  rows ${b.rows}, ${kind.noun}s ${b.orders}: ${b.valid} valid, ${b.rejected} rejected; queued ${b.enqueued}; skipped ${b.skippedDelivered} delivered, ${b.skippedHeld} held, ${b.skippedQueued} queued elsewhere${b.conflicts > 0 ? `; ${b.conflicts} not sent: ORDER_REF_REUSED` : ''}`,
      `  ${progressLine(b)}`,
    );
  }
  if (batches.length === 0) lines.push('', `no ${words.thing}batches yet: ${kind.cli} import <file>`);
  return lines.join('\n') + '\n';
}

/** `resume` of one kind: clears its breaker and resumes its queue; returns the line to print. */
export async function resumeDelivery<P>(services: Services<P>): Promise<string> {
  const trip = await breakerTrip(services.redis, services.keys);
  await resetBreaker(services.redis, services.keys);
  await services.queue.resume();
  const what = services.kind.name === 'orders' ? 'delivery' : `${services.kind.noun} registration`;
  return trip === undefined ? `${what} resumed (the breaker was not tripped)\n` : `${what} resumed; the breaker had tripped: ${trip.reason}\n`;
}
