import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { BreakerSettings } from '../deliverySettings.js';
import { SERVER_FAILING, type EvidenceClass } from './breakerEvidence.js';
import { defineScripts } from '../lua/defineScripts.js';
import { REDIS_TIME, redisTime } from '../redis/redisClock.js';

export type BreakerState = 'closed' | 'open' | 'halfOpen';

/** What `status`, `import --wait` and the event hook know about the breaker. */
export interface BreakerStatus {
  state: BreakerState;
  /** What was seen, e.g. `server failing: 500 x61, 502 x60, 503 x59 of 190 attempts in 60 s (120 orders)`. */
  reason?: string;
  /** `HTTP 400 USER_AGENT_REQUIRED`, `SERVER_FAILING`, `NO_CONNECTION`, `CREDENTIALS_REFUSED`. */
  signature?: string;
  class?: EvidenceClass;
  /** The failures that opened it, by status (`"502"`) or `no answer` / a transport code. */
  counts?: Record<string, number>;
  /** Refusals: the customers refused (at most 100). */
  customers?: string[];
  status?: number;
  code?: string;
  message?: string;
  /** When this episode first opened (reopenings keep it). */
  since?: number;
  nextProbeAt?: number;
  /** Openings in this episode: the wait doubles with each. */
  openCount?: number;
  /** Open longer than the alert limit. */
  overdue: boolean;
}

/** The breaker's state as stored, for `status` and `import --wait` (no breaker instance needed). */
export async function readBreakerStatus(
  redis: RedisClient,
  keys: Keyspace,
  alertAfterMs: number,
  now?: number,
): Promise<BreakerStatus> {
  const raw = await redis.hgetall(keys.breaker);
  const state = (raw.state ?? 'closed') as BreakerState;
  if (state === 'closed') return { state, overdue: false };
  // Redis's clock, as the scripts that wrote these times: a host's may be minutes off.
  now ??= await redisTime(redis);
  const num = (value: string | undefined) => (value === undefined || value === '' ? undefined : Number(value));
  const since = num(raw.since);
  const fields = {
    reason: raw.reason,
    signature: raw.signature,
    class: raw.class as EvidenceClass | undefined,
    counts: raw.counts === undefined ? undefined : (JSON.parse(raw.counts) as Record<string, number>),
    customers: raw.customers === undefined || raw.customers === '' ? undefined : raw.customers.split('\n'),
    status: num(raw.status),
    code: raw.code,
    message: raw.message,
    since,
    nextProbeAt: state === 'open' ? num(raw.nextProbeAt) : undefined,
    openCount: num(raw.openCount),
  };
  const defined = Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined),
  ) as Partial<BreakerStatus>;
  return { ...defined, state, overdue: since !== undefined && now - since >= alertAfterMs };
}

/**
 * What status, the dashboard and notifications show of the breaker (issue 23): its state and why,
 * the failures by status, when the next trial goes, and, while closed, whether the API is failing
 * under the threshold (`degraded`: "API failing: 35% 5xx in the last minute").
 */
export interface BreakerView {
  state: BreakerState;
  reason?: string;
  /** Open: the failures that opened it; closed: the server failures of the window. By status or `no answer`. */
  counts: Record<string, number>;
  /** Open: when the next trial calls go (ms since the epoch). */
  nextTrialAt?: number;
  /** Jobs waiting for delivery (waiting, paused and delayed), when a queue was given. */
  waiting?: number;
  /** Closed, with at least a quarter of the window's attempts failing by the server (half the opening share by default). */
  degraded?: { share: number; windowMs: number; text: string };
  /** Everything stored (`readBreakerStatus`). */
  status: BreakerStatus;
}

/** Reads the breaker's view; `queue` (a BullMQ queue) adds the jobs waiting. */
export async function readBreakerView(
  redis: RedisClient,
  keys: Keyspace,
  settings: Pick<BreakerSettings, 'windowMs' | 'serverFailingRatio' | 'alertAfterMs'>,
  options: { queue?: { getJobCounts(...types: string[]): Promise<Record<string, number>> }; now?: number } = {},
): Promise<BreakerView> {
  const now = options.now ?? (await redisTime(redis));
  const [status, window, jobs] = await Promise.all([
    readBreakerStatus(redis, keys, settings.alertAfterMs, now),
    defineScripts(redis).bulkorderReadWindow(
      keys.breakerFailures + SERVER_FAILING,
      options.now ?? REDIS_TIME,
      settings.windowMs,
      keys.breakerBuckets,
    ),
    options.queue?.getJobCounts('waiting', 'paused', 'delayed', 'prioritized'),
  ]);
  const waiting = jobs === undefined ? {} : { waiting: Object.values(jobs).reduce((sum, n) => sum + n, 0) };
  if (status.state !== 'closed') {
    return {
      state: status.state,
      counts: status.counts ?? {},
      status,
      ...waiting,
      ...(status.reason === undefined ? {} : { reason: status.reason }),
      ...(status.nextProbeAt === undefined ? {} : { nextTrialAt: status.nextProbeAt }),
    };
  }
  const [total, failing, counts] = window;
  const share = total === 0 ? 0 : failing / total;
  const degraded = failing >= 5 && share >= settings.serverFailingRatio / 2;
  const text = `API failing: ${Math.round(share * 100)}% 5xx or no answer in the last ${spanOf(settings.windowMs)}`;
  return {
    state: 'closed',
    counts: JSON.parse(counts) as Record<string, number>,
    status,
    ...waiting,
    ...(degraded ? { degraded: { share, windowMs: settings.windowMs, text } } : {}),
  };
}

/** The numbers a breaker's opening is judged on. */
export interface TripFacts {
  failures: number;
  total: number;
  orders: number;
  customers: number;
  counts: Record<string, number>;
  windowMs: number;
}

/**
 * Why it opened, naming what was seen: `server failing: 500 x61, 502 x60, 503 x59 of 190 attempts
 * in 60 s (120 orders)`, `refused with HTTP 403 X: 25 of 26 attempts in 60 s (20 orders, 3 customers)`.
 */
export function breakerReason(
  evidence: { class: EvidenceClass; signature: string; code: string },
  facts: TripFacts,
): string {
  const counts = Object.entries(facts.counts)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([label, n]) => `${label} x${n}`)
    .join(', ');
  const span = `of ${facts.total} attempts in ${spanOf(facts.windowMs)}`;
  switch (evidence.class) {
    case 'serverFailing':
      return `server failing: ${counts} ${span} (${facts.orders} orders)`;
    case 'unreachable':
      return `not connected: ${counts} ${span} (${facts.orders} orders)`;
    case 'credentials':
      return `refused our credentials (401 with a fresh token): ${facts.failures} ${span}: ${evidence.code}`;
    case 'refusal':
      return `refused with ${evidence.signature}: ${facts.failures} ${span} (${facts.orders} orders, ${facts.customers} customers)`;
  }
}

function spanOf(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
