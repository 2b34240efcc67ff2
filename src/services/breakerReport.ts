import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { BreakerSettings } from '../deliverySettings.js';
import { readBreakerView, type BreakerState } from '../worker/breakerView.js';
import { countBurstDeadLetters } from './deliveryControl.js';

/**
 * What the circuit breaker sees, for the places people look (`status`, `import --wait`, the
 * notifications): the breaker's own view (src/worker/breakerView.ts) plus what waits on it.
 */
export interface BreakerReport {
  state: BreakerState;
  /** What was seen, e.g. `server failing: 500 x61, 502 x60, 503 x59 of 190 attempts in 60 s (120 orders)`. */
  reason?: string;
  /** Status and code of the trip (`SERVER_FAILING`, `HTTP 403 FORBIDDEN`), without the API's message. */
  signature?: string;
  /** When this episode first opened. */
  since?: number;
  nextTrialAt?: number;
  /** Open longer than the alert limit. */
  overdue: boolean;
  /** What waits: jobs in the queue (waiting, paused or delayed) and dead letters sent back on close (only those dead-lettered). */
  waiting: { jobs: number; burst: number };
  /** Closed but failing: the window's share of 5xx and unanswered attempts, by status. */
  degraded?: { share: number; failures: number; seen: string; windowMs: number; text: string };
}

/** Reads the breaker's view and what waits on it. */
export async function readBreakerReport(
  deps: { redis: RedisClient; keys: Keyspace; queue: Pick<Queue, 'getJobCounts'> },
  settings: Pick<BreakerSettings, 'windowMs' | 'serverFailingRatio' | 'alertAfterMs'>,
): Promise<BreakerReport> {
  const [view, burst] = await Promise.all([
    readBreakerView(deps.redis, deps.keys, settings, { queue: deps.queue }),
    countBurstDeadLetters(deps),
  ]);
  const s = view.status;
  const report: BreakerReport = {
    state: view.state,
    overdue: s.overdue,
    waiting: { jobs: view.waiting ?? 0, burst },
    ...(view.reason === undefined ? {} : { reason: view.reason }),
    ...(s.signature === undefined ? {} : { signature: s.signature }),
    ...(s.since === undefined ? {} : { since: s.since }),
    ...(view.nextTrialAt === undefined ? {} : { nextTrialAt: view.nextTrialAt }),
  };
  if (view.degraded === undefined) return report;
  const failures = Object.values(view.counts).reduce((sum, n) => sum + n, 0);
  return { ...report, degraded: { ...view.degraded, failures, seen: countsText(view.counts) } };
}

/** Lines for `status` and `import --wait` beside describeHealth's: what waits on an open breaker, or a closed one failing. */
export function describeBreakerReport(report: BreakerReport): string[] {
  if (report.state !== 'closed') {
    return [
      `  waiting: ${report.waiting.jobs} jobs in the queue${report.waiting.burst > 0 ? `, ${report.waiting.burst} dead letter${report.waiting.burst === 1 ? '' : 's'} of the burst sent again on close` : ''}`,
    ];
  }
  return report.degraded === undefined ? [] : [`${report.degraded.text} (${report.degraded.seen})`];
}

/** `503 x12, 500 x9`: largest first. */
function countsText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([label, n]) => `${label} x${n}`)
    .join(', ');
}
