import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TRANSPORT_ERRORS, type Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';

/** Which API a delivery worker talks to (a label value). */
export type MetricsApi = 'business' | 'cafetariaplan';

/**
 * How a record of a delivery job ended, as counted in `bulkorder_orders_total{outcome}`: as each
 * ends in its job's attempt, and for a job BullMQ failed for good, as its records were parked.
 */
export type OrderOutcome = 'delivered' | 'dead_lettered' | 'held' | 'superseded';

/**
 * What the delivery path reports; injected into jobs/deliveryWorker.ts (optional), so the
 * delivery logic itself knows nothing of Prometheus.
 */
export interface DeliveryMetricsSink {
  /** One API request and how it was classified. */
  request(api: MetricsApi, outcome: ApiOutcome, durationSeconds: number): void;
  /** A job ended for good. */
  order(api: MetricsApi, outcome: OrderOutcome): void;
  /** One token request to the token endpoint (not a cache hit). */
  tokenRequest(api: MetricsApi, result: 'ok' | 'failed', error?: unknown): void;
  /** The wedge guard gave this process's worker a new BullMQ worker (src/worker/wedgeGuard.ts). */
  workerRecovered(api: MetricsApi): void;
}

/** Reads the shared state (Redis) at scrape time: queue depth, breaker, batches, workers. */
export interface StateSnapshot {
  queues: {
    api: MetricsApi;
    waiting: number;
    active: number;
    delayed: number;
    paused: boolean;
    workers: number;
    breakerOpen: boolean;
  }[];
  batchesByState: Record<string, number>;
  deadLetters: number;
  held: number;
}

/** The process's metrics: counters it counts itself, gauges read from Redis when scraped. */
export interface BulkorderMetrics extends DeliveryMetricsSink {
  readonly registry: Registry;
  /** The last token failure of this process since its last success (for /readyz), if any. */
  lastTokenFailure(): { api: MetricsApi; at: number; message: string } | undefined;
  /** A notification that failed for good, by destination (a masked webhook URL, or `email`). */
  notificationFailed(destination: string): void;
  /** Whether this worker's Redis guard holds a kind's worker paused (src/worker/redisGuard.ts). */
  redisUnsafe(api: MetricsApi, unsafe: boolean): void;
  /** Text exposition for /metrics. */
  render(): Promise<{ contentType: string; body: string }>;
}

// Error codes come from the remote API; anything that does not look like a code is folded, so
// a misbehaving server cannot blow up the label space.
const CODE_LABEL = /^[A-Za-z0-9_.-]{1,48}$/;

/** Our codes for a request that got no (complete) answer: timeouts, resets, refused connections. */
const NO_ANSWER_CODES = new Set(['NETWORK_ERROR', ...Object.values(TRANSPORT_ERRORS).map((e) => e.code)]);

/**
 * prom-client's default gauges that end in `_total` (sums of the per-type gauges it also exports):
 * Prometheus reserves `_total` for counters, and `promtool check metrics` refuses them.
 */
const DEFAULT_GAUGES_NAMED_TOTAL = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Request durations in seconds: our HTTP deadline is 60 s by default. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Builds a registry with every `bulkorder_*` metric (Prometheus naming: base units, `_total`
 * counters, no per-order labels). `snapshot` is called on each scrape; give none where nothing
 * shared is known (tests), and the gauges stay empty.
 */
// eslint-disable-next-line max-lines-per-function -- one declaration per metric: a catalogue that reads whole, not a procedure
export function createMetrics(
  options: { snapshot?: () => Promise<StateSnapshot | undefined>; processMetrics?: boolean } = {},
): BulkorderMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) {
    // prom-client names its own metrics process_* and nodejs_*: the prefix is ours alone.
    collectDefaultMetrics({ register: registry, prefix: 'bulkorder_' });
    for (const name of DEFAULT_GAUGES_NAMED_TOTAL) registry.removeSingleMetric(`bulkorder_${name}`);
  }
  /** A counter in this registry, as every `bulkorder_*` one is. */
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const orders = counter(
    'bulkorder_orders_total',
    'Orders whose delivery ended, by API and outcome (accounts count under api="cafetariaplan").',
    ['api', 'outcome'],
  );
  const requests = new Histogram({
    name: 'bulkorder_api_request_duration_seconds',
    help: 'API requests (POST) by API and classified outcome kind.',
    labelNames: ['api', 'kind'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const refusals = counter(
    'bulkorder_api_refusals_total',
    'API answers that were not a success, by HTTP status and error code.',
    ['api', 'status', 'code'],
  );
  const noAnswers = counter(
    'bulkorder_api_no_answer_total',
    'API requests that got no (complete) answer: timeouts, resets, refused connections, by our code.',
    ['api', 'code'],
  );
  const notifyFailures = counter(
    'bulkorder_notification_failures_total',
    'Notifications that failed after their retries, by destination (webhook URL with its secret parts masked, or email).',
    ['destination'],
  );
  const tokens = counter(
    'bulkorder_token_requests_total',
    'Requests to the token endpoint by this process, by result.',
    ['api', 'result'],
  );
  const wedgeRecoveries = counter(
    'bulkorder_worker_wedge_recoveries_total',
    "Times this process's worker took no job while jobs waited for BULKORDER_WEDGE_CHECKS looks and got a new BullMQ worker (WORKER_WEDGED).",
    ['api'],
  );
  const redisUnsafe = new Gauge({
    name: 'bulkorder_worker_redis_unsafe',
    help: '1 while this worker takes no jobs because Redis evicts, lacks persistence in production, or cannot be checked (BULKORDER_REDIS_CHECK_UNVERIFIABLE=pause).',
    labelNames: ['api'],
    registers: [registry],
  });
  let lastSnapshot: Promise<StateSnapshot | undefined> | undefined;
  const snapshot = (): Promise<StateSnapshot | undefined> => {
    // One Redis round per scrape, shared by every gauge below.
    lastSnapshot ??= (options.snapshot?.() ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .finally(() => setTimeout(() => (lastSnapshot = undefined), 0));
    return lastSnapshot;
  };
  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    fill: (g: Gauge, s: StateSnapshot) => void,
  ): void => {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        const s = await snapshot();
        if (s !== undefined) fill(this, s);
      },
    });
  };
  gauge(
    'bulkorder_queue_jobs',
    'Jobs in the delivery queue by state (waiting, active, delayed).',
    ['api', 'state'],
    (g, s) => {
      for (const q of s.queues)
        for (const state of ['waiting', 'active', 'delayed'] as const) g.set({ api: q.api, state }, q[state]);
    },
  );
  gauge('bulkorder_queue_paused', '1 when the delivery queue is paused.', ['api'], (g, s) =>
    s.queues.forEach((q) => g.set({ api: q.api }, q.paused ? 1 : 0)),
  );
  gauge(
    'bulkorder_breaker_open',
    '1 when the circuit breaker has tripped (delivery paused until `bulkorder resume`).',
    ['api'],
    (g, s) => s.queues.forEach((q) => g.set({ api: q.api }, q.breakerOpen ? 1 : 0)),
  );
  gauge(
    'bulkorder_workers',
    'Live worker processes of the delivery queue (their heartbeats, as status shows them).',
    ['api'],
    (g, s) => s.queues.forEach((q) => g.set({ api: q.api }, q.workers)),
  );
  gauge('bulkorder_batches', 'Recent batches (the last 200) by state.', ['state'], (g, s) =>
    Object.entries(s.batchesByState).forEach(([state, n]) => g.set({ state }, n)),
  );
  gauge('bulkorder_dead_letters', 'Dead letters kept (orders).', [], (g, s) => g.set(s.deadLetters));
  gauge('bulkorder_held_for_review', 'Orders held for review (orders).', [], (g, s) => g.set(s.held));

  let tokenFailure: { api: MetricsApi; at: number; message: string } | undefined;
  return {
    registry,
    request(api, outcome, durationSeconds) {
      requests.observe({ api, kind: outcome.kind }, durationSeconds);
      if (outcome.kind === 'delivered') return;
      // A timeout is not the API refusing: no answer came (or not all of it, even after a status line).
      if (outcome.status === undefined || NO_ANSWER_CODES.has(outcome.code))
        noAnswers.inc({ api, code: NO_ANSWER_CODES.has(outcome.code) ? outcome.code : 'OTHER' });
      else
        refusals.inc({
          api,
          status: String(outcome.status),
          code: CODE_LABEL.test(outcome.code) ? outcome.code : 'OTHER',
        });
    },
    order(api, outcome) {
      orders.inc({ api, outcome });
    },
    tokenRequest(api, result, error) {
      tokens.inc({ api, result });
      tokenFailure =
        result === 'ok'
          ? undefined
          : {
              api,
              at: Date.now(),
              message: error instanceof Error ? ((error as { code?: string }).code ?? error.name) : 'failed',
            };
    },
    workerRecovered(api) {
      wedgeRecoveries.inc({ api });
    },
    lastTokenFailure: () => tokenFailure,
    notificationFailed(destination) {
      notifyFailures.inc({ destination });
    },
    redisUnsafe(api, unsafe) {
      redisUnsafe.set({ api }, unsafe ? 1 : 0);
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
