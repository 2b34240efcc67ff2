import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { BreakerSettings } from '../deliverySettings.js';
import { readBreakerStatus, type BreakerState } from './circuitBreaker.js';

/**
 * What the circuit breaker sees, for the places people look (`status`, `import --wait`, the
 * notifications). The one adapter over the breaker's stored state: when the breaker exposes its
 * own view (issue 26), this function reads that instead and its callers stay as they are.
 */
export interface BreakerView {
  state: BreakerState;
  /** What was seen, e.g. `61 of 70 attempts in 60 s (12 orders) refused with HTTP 503 ...`. */
  reason?: string;
  /** Status and code of the trip (`HTTP 503 SERVICE_UNAVAILABLE`), without the API's message. */
  signature?: string;
  /** When this episode first opened. */
  since?: number;
  nextTrialAt?: number;
  /** Open longer than the alert limit. */
  overdue: boolean;
  /** What waits: jobs in the queue (waiting or delayed) and dead letters sent back on close. */
  waiting: { jobs: number; burst: number };
  /** Closed but failing: the window's share of 5xx and unanswered attempts, when high enough to say. */
  degraded?: { share: number; failures: number; attempts: number; what: string; seen: string; windowMs: number };
}

/** A share of failing attempts worth saying while the breaker stays closed, and the fewest failures that count. */
export const DEGRADED_SHARE = 0.2;
const DEGRADED_MIN_FAILURES = 5;

/** Reads the breaker's view; `degraded` only while closed (open, the reason says it all). */
export async function readBreakerView(deps: { redis: RedisClient; keys: Keyspace; queue: Pick<Queue, 'getJobCounts'> }, settings: Pick<BreakerSettings, 'windowMs' | 'alertAfterMs'>, now = Date.now()): Promise<BreakerView> {
  const [status, burst, counts] = await Promise.all([
    readBreakerStatus(deps.redis, deps.keys, settings.alertAfterMs, now),
    deps.redis.scard(deps.keys.breakerBurst),
    deps.queue.getJobCounts('waiting', 'delayed', 'prioritized'),
  ]);
  const view: BreakerView = {
    state: status.state,
    overdue: status.overdue,
    waiting: { jobs: (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0), burst },
    ...(status.reason === undefined ? {} : { reason: status.reason }),
    ...(status.signature === undefined ? {} : { signature: status.signature }),
    ...(status.since === undefined ? {} : { since: status.since }),
    ...(status.nextProbeAt === undefined ? {} : { nextTrialAt: status.nextProbeAt }),
  };
  if (status.state !== 'closed') return view;
  const degraded = await readDegraded(deps.redis, deps.keys, settings.windowMs, now);
  return degraded === undefined ? view : { ...view, degraded };
}

/**
 * The closed breaker's window: attempts per second (buckets) and each failure signature's
 * attempts (a sorted set per signature, found by SCAN: a handful of keys at most).
 */
async function readDegraded(redis: RedisClient, keys: Keyspace, windowMs: number, now: number): Promise<BreakerView['degraded']> {
  const signatures: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${escapeGlob(keys.breakerFailures)}*`, 'COUNT', 1000);
    cursor = next;
    signatures.push(...found.map((key) => key.slice(keys.breakerFailures.length)));
  } while (cursor !== '0');
  const failing = signatures.filter((s) => /^HTTP 5\d\d\b/.test(s) || s === 'NO_ANSWER' || s === 'NO_CONNECTION');
  if (failing.length === 0) return undefined;
  const pipeline = redis.pipeline();
  for (const s of failing) pipeline.zcount(keys.breakerFailures + s, now - windowMs, '+inf');
  const last = Math.floor(now / 1000);
  const buckets = Array.from({ length: Math.ceil(windowMs / 1000) }, (_, i) => `${keys.breakerBuckets}${last - i}`);
  pipeline.mget(...buckets);
  const replies = (await pipeline.exec()) ?? [];
  const perSignature = failing.map((s, i) => ({ s, n: Number(replies[i]?.[1] ?? 0) })).filter((x) => x.n > 0);
  const failures = perSignature.reduce((sum, x) => sum + x.n, 0);
  const attempts = Math.max(failures, ((replies[failing.length]?.[1] ?? []) as (string | null)[]).reduce((sum, v) => sum + Number(v ?? 0), 0));
  if (failures < DEGRADED_MIN_FAILURES || failures < DEGRADED_SHARE * attempts) return undefined;
  // `500 x61, 502 x60`: statuses the way a person reads them; the code of each stays in the log.
  const seen = perSignature.map((x) => ({ label: x.s.replace(/^HTTP (\d+).*$/, '$1'), n: x.n }));
  const http = perSignature.filter((x) => x.s.startsWith('HTTP')).length;
  const what = http === perSignature.length ? '5xx' : http === 0 ? 'without an answer' : '5xx or without an answer';
  return { share: failures / attempts, failures, attempts, what, seen: mergeCounts(seen), windowMs };
}

/** Lines for `status` and `import --wait` beside describeHealth's: what waits on an open breaker, or a closed one failing. */
export function describeBreakerView(view: BreakerView): string[] {
  if (view.state !== 'closed') {
    return [`  waiting: ${view.waiting.jobs} jobs in the queue${view.waiting.burst > 0 ? `, ${view.waiting.burst} dead letters of the burst sent again on close` : ''}`];
  }
  return view.degraded === undefined ? [] : [degradedLine(view.degraded)];
}

/** `API failing: 35% 5xx in the last minute (500 x61, 502 x60)`: the breaker is closed, but not for long perhaps. */
export function degradedLine(d: NonNullable<BreakerView['degraded']>): string {
  const window = d.windowMs === 60_000 ? 'minute' : `${Math.round(d.windowMs / 1000)} s`;
  return `API failing: ${Math.round(d.share * 100)}% ${d.what} in the last ${window} (${d.seen}; ${d.failures} of ${d.attempts} attempts)`;
}

/** Two codes of one status count as one entry: `503 x12`, largest first. */
function mergeCounts(seen: readonly { label: string; n: number }[]): string {
  const totals = new Map<string, number>();
  for (const { label, n } of seen) totals.set(label, (totals.get(label) ?? 0) + n);
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([label, n]) => `${label} x${n}`).join(', ');
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
