import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { DeliveryMetricsSink, MetricsApi, OrderOutcome } from './bulkorderMetrics.js';

/** Upper bounds (ms) of the latency buckets kept per minute; the last one catches the rest. */
const LATENCY_BUCKETS_MS = [25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, Infinity];
/** Each bucket's field, made once (a request is counted in one of them). */
const LATENCY_FIELDS = LATENCY_BUCKETS_MS.map((_, i) => `lat:${i}`);

const MINUTE = 60_000;
const KEEP_MS = 25 * 3600_000;

/** One minute of the chart. */
export interface MinutePoint {
  minute: number;
  delivered: number;
  refused: number;
  held: number;
}

/** Where one API's minutes go: its kind's keyspace. */
export interface StatsTarget {
  redis: RedisClient;
  keys: Keyspace;
}

/**
 * Per-minute outcome counts and request latency buckets in Redis, summed over every worker, for
 * the dashboard's 24-hour chart and p50/p95. Counted in memory and written every few seconds
 * (one HINCRBY pipeline per flush, not per order), so it costs delivery nothing measurable.
 */
export function createMinuteStats(
  targets: Partial<Record<MetricsApi, StatsTarget>>,
  options: { flushMs?: number } = {},
): Pick<DeliveryMetricsSink, 'request' | 'order'> & { flush(): Promise<void>; close(): Promise<void> } {
  const pending = new Map<string, Map<string, number>>(); // `${api}|${minute}` -> field -> count
  // The id of the current minute per API, made once a minute rather than twice per order.
  let idsMinute = -1;
  let ids: Partial<Record<MetricsApi, string>> = {};
  const add = (api: MetricsApi, field: string): void => {
    const minute = Math.floor(Date.now() / MINUTE);
    if (minute !== idsMinute) {
      idsMinute = minute;
      ids = {};
    }
    const id = (ids[api] ??= `${api}|${minute}`);
    let fields = pending.get(id);
    if (fields === undefined) pending.set(id, (fields = new Map<string, number>()));
    fields.set(field, (fields.get(field) ?? 0) + 1);
  };
  const flush = async (): Promise<void> => {
    const batch = [...pending.entries()];
    pending.clear();
    for (const [id, fields] of batch) {
      const [api, minute] = id.split('|') as [MetricsApi, string];
      const target = targets[api];
      if (target === undefined) continue;
      const key = target.keys.statsMinute(Number(minute));
      const multi = target.redis.multi();
      for (const [field, by] of fields) multi.hincrby(key, field, by);
      await multi.pexpire(key, KEEP_MS).exec();
    }
  };
  const timer = setInterval(() => void flush().catch(() => undefined), options.flushMs ?? 5_000);
  timer.unref();
  return {
    request(api, _outcome: ApiOutcome, durationSeconds) {
      const ms = durationSeconds * 1000;
      const bucket = LATENCY_BUCKETS_MS.findIndex((bound) => ms <= bound);
      add(api, LATENCY_FIELDS[bucket] ?? `lat:${bucket}`);
    },
    order(api, outcome: OrderOutcome) {
      if (outcome === 'delivered') add(api, 'delivered');
      else if (outcome === 'dead_lettered') add(api, 'refused');
      else if (outcome === 'held') add(api, 'held');
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush().catch(() => undefined);
    },
  };
}

/** The last 24 h, one point per minute (missing minutes are zeros), and p50/p95 of the last hour's requests. */
export async function readMinuteStats(
  target: StatsTarget,
  now = Date.now(),
): Promise<{ points: MinutePoint[]; p50Ms: number | undefined; p95Ms: number | undefined }> {
  const last = Math.floor(now / MINUTE);
  const minutes = Array.from({ length: 24 * 60 }, (_, i) => last - 24 * 60 + 1 + i);
  const pipeline = target.redis.pipeline();
  for (const minute of minutes) pipeline.hgetall(target.keys.statsMinute(minute));
  const results = (await pipeline.exec()) ?? [];
  const buckets = LATENCY_BUCKETS_MS.map(() => 0);
  const points = minutes.map((minute, i) => {
    const raw = (results[i]?.[1] ?? {}) as Record<string, string>;
    if (i >= minutes.length - 60) buckets.forEach((sum, b) => (buckets[b] = sum + Number(raw[`lat:${b}`] ?? 0)));
    return {
      minute,
      delivered: Number(raw.delivered ?? 0),
      refused: Number(raw.refused ?? 0),
      held: Number(raw.held ?? 0),
    };
  });
  return { points, p50Ms: percentile(buckets, 0.5), p95Ms: percentile(buckets, 0.95) };
}

/** The upper bound of the bucket holding the q-th request (an upper estimate, as Prometheus' histogram_quantile). */
function percentile(buckets: readonly number[], q: number): number | undefined {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return undefined;
  let seen = 0;
  for (const [i, count] of buckets.entries()) {
    seen += count;
    if (seen >= q * total) return LATENCY_BUCKETS_MS[i];
  }
  return undefined;
}
