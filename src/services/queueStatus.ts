import { UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import {
  describeHealth,
  pauseDelivery,
  readDeliveryHealth,
  resumeDelivery as resumeQueue,
  type DeliveryHealth,
  type PauseRecord,
} from './deliveryControl.js';
import { describeBreakerReport, readBreakerReport, type BreakerReport } from './breakerReport.js';
import { progressLine } from '../batches/followBatch.js';
import { isSettled, type Batch } from '../batches/batchStore.js';
import type { RedisSafety } from '../worker/redisGuard.js';
import { readRedisSafety } from './redisSafetyReport.js';
import { localTime } from '../timeText.js';
import { readBatchCircuit, type BatchCircuitView } from '../batches/batchCircuit.js';
import { describeCircuit, heldBatches } from './batchControl.js';

/** Words that set one kind's status apart: `queue` / `accounts queue`, `dead letters` / `account dead letters`. */
function own<P>(services: Services<P>): { queue: string; thing: string } {
  const orders = services.kind.name === 'orders';
  return { queue: orders ? 'queue' : `${services.kind.name} queue`, thing: orders ? '' : `${services.kind.noun} ` };
}

/** What `status --json` prints and the library's `status()` returns: one kind's queue, breaker, workers, parked records and batches. */
export interface StatusReport {
  env: string;
  /** Jobs by state (waiting, active, delayed, prioritized, waiting-children): a job holds up to BULKORDER_ORDERS_PER_JOB records. */
  queue: { jobs: Record<string, number>; paused: boolean; pausedBy: PauseRecord | null };
  /** The breaker's state and reason, with what waits and (closed but failing) the API's failing share. */
  breaker: DeliveryHealth['breaker'] & Pick<BreakerReport, 'waiting' | 'degraded'>;
  workers: DeliveryHealth['workers'];
  deadLetters: number;
  heldForReview: number;
  /** Whether workers take jobs from this Redis (their guard's decision): unsafe while it evicts, or lacks persistence in production. */
  redis: RedisSafety;
  batches: (Batch & { settled: boolean; circuit: BatchCircuitView })[];
  /** Batches their canary holds (one batch's content refused, not the API's): each with its cause. */
  heldBatches: BatchCircuitView[];
}

/** Reads a kind's status: its recent batches (or the one named), queue counts, breaker, workers and parked records. */
export async function readQueueStatus<P>(
  services: Services<P>,
  options: { batchId?: string; limit?: number } = {},
): Promise<{ report: StatusReport; health: DeliveryHealth; view: BreakerReport }> {
  const { kind, env } = services;
  let batches: Batch[];
  if (options.batchId === undefined) batches = await services.batches.list(options.limit ?? 10);
  else {
    const batch = await services.batches.get(options.batchId);
    if (batch === undefined)
      throw new UsageError(
        'BATCH_NOT_FOUND',
        `no ${own(services).thing}batch ${options.batchId} in ${env} (${kind.cli} status lists recent ones)`,
      );
    batches = [batch];
  }
  const [queue, health, view, dead, held, redis, heldNow, shown] = await Promise.all([
    services.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
    readDeliveryHealth(services, services.delivery.breaker.alertAfterMs),
    readBreakerReport(services, services.delivery.breaker),
    services.redis.zcard(services.keys.parkedIndex('dead')),
    services.redis.zcard(services.keys.parkedIndex('held')),
    readRedisSafety(services),
    heldBatches(services),
    Promise.all(
      batches.map(async (b) => ({
        ...b,
        settled: isSettled(b),
        circuit: await readBatchCircuit(services.redis, services.keys, b.id),
      })),
    ),
  ]);
  const report: StatusReport = {
    env,
    queue: { jobs: queue, paused: health.paused, pausedBy: health.pausedBy ?? null },
    breaker: {
      ...health.breaker,
      waiting: view.waiting,
      ...(view.degraded === undefined ? {} : { degraded: view.degraded }),
    },
    workers: health.workers,
    deadLetters: dead,
    heldForReview: held,
    redis,
    batches: shown,
    heldBatches: heldNow,
  };
  return { report, health, view };
}

/**
 * `bulkorder status` and `bulkorder accounts status`, written once: a kind's batches, its queue,
 * its circuit breaker and its parked records, as text or JSON.
 */
export async function queueStatus<P>(
  services: Services<P>,
  options: {
    batchId?: string;
    limit?: number;
    json?: boolean;
    /** The operator's zone (BULKORDER_TIMEZONE): text shows times in it, with the offset; JSON stays UTC. */
    timeZone?: string;
  },
): Promise<string> {
  const zone = options.timeZone ?? 'UTC';
  const { kind, env } = services;
  const words = own(services);
  const { report, health, view } = await readQueueStatus(services, options);
  if (options.json === true) {
    const { jobs, ...rest } = report.queue;
    return JSON.stringify({ ...report, queue: { ...jobs, ...rest } }, null, 2) + '\n'; // the flat shape `status --json` has always printed
  }
  const { batches } = report;
  const queue = report.queue.jobs;
  const dead = report.deadLetters;
  const held = report.heldForReview;
  const paused = health.paused;
  const lines = [
    // Jobs, not records: an import's job holds up to BULKORDER_ORDERS_PER_JOB of them; the batches below count records.
    `environment ${env}; ${words.queue}: jobs ${queue.waiting ?? 0} waiting, ${queue.active ?? 0} active, ${queue.delayed ?? 0} delayed (up to ${services.delivery.ordersPerJob} ${kind.noun}s a job)${paused ? ' (PAUSED)' : ''}`,
    `${words.thing}dead letters: ${dead}; held for review: ${held}`,
  ];
  if (report.redis.unsafe)
    lines.unshift(
      `REDIS UNSAFE (${report.redis.code ?? ''}): ${report.redis.reason ?? ''}. Workers take no jobs until it is fixed.`,
    );
  const breakerLines = describeHealth(
    health,
    { resume: `${kind.cli} resume`, worker: 'bulkorder worker' },
    { showWorkers: true, timeZone: zone },
  );
  // What the breaker sees goes right under its own line (open: what waits; closed: failing anyway).
  breakerLines.splice(view.state === 'closed' ? 0 : 1, 0, ...describeBreakerReport(view));
  lines.push(`circuit breaker ${health.breaker.state}`, ...breakerLines);
  // Beside the API's breaker: batches their own canary holds (their content, not the API).
  if (report.heldBatches.length > 0) {
    lines.push(`batches held by their canary: ${report.heldBatches.length} (other batches go on)`);
    for (const c of report.heldBatches)
      lines.push(
        `  ${c.batchId}: ${c.refusedCount} refused with ${c.cause ?? 'one cause'}${c.code === undefined ? '' : ` (API code ${c.code})`}; ${kind.cli} batch show ${c.batchId}`,
      );
  }
  for (const b of batches) {
    lines.push(
      '',
      `${b.id}  ${b.file}  ${localTime(b.startedAt, zone)}  ${b.importState}${isSettled(b) ? ', settled' : ''}`,
      `  rows ${b.rows}, ${kind.noun}s ${b.orders}: ${b.valid} valid, ${b.rejected} rejected; queued ${b.enqueued}; skipped ${b.skippedDelivered} delivered, ${b.skippedHeld} held, ${b.skippedQueued} queued elsewhere${b.conflicts > 0 ? `; ${b.conflicts} not sent: ORDER_REF_REUSED` : ''}`,
      `  ${progressLine(b)}`,
      ...describeCircuit(b.circuit, kind.cli, zone),
      ...filesLines(b),
    );
  }
  if (batches.length === 0) lines.push('', `no ${words.thing}batches yet: ${kind.cli} import <file>`);
  return lines.join('\n') + '\n';
}

/** Where a batch's trail is: its rejects and results files, or where its results will be once it settles. */
function filesLines(b: Batch): string[] {
  return [...(b.rejectsFile === undefined ? [] : [`  rejects: ${b.rejectsFile}`]), ...resultsLine(b)];
}

/** `resume` of one kind: clears a manual pause and the breaker (requeueing its burst) and resumes its queue; returns the line to print. */
export async function resumeDelivery<P>(services: Services<P>, logger: Logger): Promise<string> {
  const done = await resumeQueue(services, {
    settings: services.delivery.breaker,
    jobName: services.kind.jobName,
    logger,
  });
  const what = services.kind.name === 'orders' ? 'delivery' : `${services.kind.noun} registration`;
  const was = [
    done.pausedBy === undefined ? '' : `paused by ${done.pausedBy.by}`,
    done.breaker.state === 'closed' ? '' : `breaker ${done.breaker.state}: ${done.breaker.reason ?? ''}`,
  ].filter((t) => t !== '');
  return `${what} resumed${was.length === 0 ? '' : ` (it was ${was.join('; ')})`}${done.requeued > 0 ? `; ${done.requeued} dead letters of the breaker's burst queued again` : ''}\n`;
}

/** `pause` of one kind: every worker stops taking its jobs until `resume`; the breaker never resumes it. */
export async function pauseQueue<P>(services: Services<P>): Promise<string> {
  const record = await pauseDelivery(services);
  return `${services.kind.name === 'orders' ? 'delivery' : `${services.kind.noun} registration`} paused by ${record.by}; requests in flight finish. Undo with: ${services.kind.cli} resume\n`;
}

/** The results line: the file written, or the one to be written once the batch settles. */
function resultsLine(b: Batch): string[] {
  if (b.resultsFile !== undefined) return [`  results: ${b.resultsFile}`];
  if (b.pendingResultsFile !== undefined) return [`  results: ${b.pendingResultsFile} (written once settled)`];
  return [];
}
