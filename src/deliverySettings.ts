/** Delays between delivery attempts (src/worker/backoff.ts computes them). */
export interface BackoffSettings {
  /** Delay after the first failure; default 2 s. */
  baseMs: number;
  /** No delay exceeds this; default 10 min. */
  maxMs: number;
}

/**
 * How records are delivered. A base type beside config.ts (which holds the defaults and reads it from
 * BULKORDER_* variables), so the base layer imports nothing from worker/.
 */
export interface DeliverySettings {
  /** Requests in flight per worker process (BULKORDER_CONCURRENCY); default 20. */
  concurrency: number;
  /**
   * Records an import puts in one BullMQ job (BULKORDER_ORDERS_PER_JOB); default 25. BullMQ's own
   * work (about 25 Redis commands and 900 B) is per job, so a job of 25 orders costs a 25th of it
   * per order; each order keeps its own ledger entry, claim, outcome and dead letter. 1: one job per
   * order, as before. 25 rather than 10 since BENCHMARKS.md round 17 (the worker's CPU per order 5-10% less).
   */
  ordersPerJob: number;
  /** Attempts per order, the first included (BULKORDER_ATTEMPTS); default 21 (1 to 2 hours of retries: see backoff.ts). */
  attempts: number;
  /** BULKORDER_BACKOFF_BASE_MS, BULKORDER_BACKOFF_MAX_MS. */
  backoff: BackoffSettings;
  /** Global cap on requests per second across all workers (BULKORDER_MAX_RPS); 0 = none. */
  maxRequestsPerSecond: number;
  /** How every worker slows together after a 429 (BULKORDER_RATE_*): see RateSettings below. */
  rate: RateSettings;
  /** What to do with an order sent without an answer (BULKORDER_AMBIGUOUS): hold (default) or resend (at-least-once). */
  ambiguousPolicy: 'hold' | 'resend';
  /** Ledger and batch retention (BULKORDER_LEDGER_RETENTION_DAYS); default 90 days. */
  ledgerRetentionMs: number;
  /**
   * Retention of employee accounts' ledger entries and batches (BULKORDER_ACCOUNT_RETENTION_DAYS);
   * default 10 years, since the entry holds the customerId that login needs long after registration.
   */
  accountRetentionMs: number;
  /**
   * How long a dead letter or held record (full recipient data) is kept (BULKORDER_PARKED_RETENTION_DAYS);
   * default 30 days, long enough to fix a night's file. The ledger entry of a held order outlives it.
   */
  parkedRetentionMs: number;
  /**
   * Refuse a Redis without persistence (AOF or RDB) instead of warning: production, unless
   * BULKORDER_ALLOW_VOLATILE_REDIS=yes. A Redis restarted empty forgets what was delivered.
   */
  requirePersistentRedis: boolean;
  /**
   * Refuse a Redis whose eviction policy and persistence this user cannot read at all (neither CONFIG
   * nor INFO: a least-privilege ACL user). True in production unless BULKORDER_ALLOW_UNVERIFIED_REDIS=yes.
   */
  requireVerifiableRedis: boolean;
  /** When the circuit breaker opens and how it heals (BULKORDER_BREAKER_*): see BreakerSettings below. */
  breaker: BreakerSettings;
  /** One batch's circuit (its canary); default DEFAULT_CANARY. */
  canary?: CanarySettings;
  /**
   * How long a worker may take to stop after SIGTERM, Redis or not (BULKORDER_SHUTDOWN_GRACE_MS);
   * default 30 s. See `shutdownBudget` for how it is spent.
   */
  shutdownGraceMs: number;
  /**
   * How often workers look for jobs whose worker died (BULKORDER_STALLED_INTERVAL_MS); default 30 s.
   * A killed worker's orders come back after about this plus the job lock (request deadline + 5 s).
   */
  stalledIntervalMs: number;
  /**
   * How many times a job may come back after the worker holding it died (BULKORDER_MAX_STALLS;
   * default 5). Each time, the records it had in flight are held and the next worker sends the
   * rest; one more and BullMQ fails the job (one that kills every worker taking it), and its
   * records never sent are dead-lettered (JOB_FAILED).
   */
  maxStalls: number;
  /**
   * How the worker's guard looks at Redis (src/worker/redisGuard.ts): every `everyMs`
   * (BULKORDER_REDIS_CHECK_MS, default 5 s); while Redis evicts, or lacks persistence where
   * `requirePersistentRedis`, the worker takes no jobs. `unverifiable` (BULKORDER_REDIS_CHECK_UNVERIFIABLE,
   * default `run`): whether a Redis that refuses CONFIG pauses it too.
   */
  redisCheck: { everyMs: number; unverifiable: 'pause' | 'run' };
  /**
   * The guard of BullMQ's blocking wait (src/worker/wedgeGuard.ts): every `everyMs` (BULKORDER_WEDGE_CHECK_MS,
   * default 10 s; 0: off), a worker that takes no job while jobs wait for `checks` looks in a row
   * (BULKORDER_WEDGE_CHECKS, default 3) gets a new BullMQ worker. Default DEFAULT_WEDGE_CHECK.
   */
  wedgeCheck?: WedgeCheckSettings;
}

/**
 * The request rate all workers share once the API has answered 429 (src/worker/sharedRate.ts):
 * additive increase, multiplicative decrease, as TCP does. Before the first 429 there is no rate
 * (only BULKORDER_MAX_RPS, when set, caps it).
 */
export interface RateSettings {
  /** The rate is never cut below this many requests per second (BULKORDER_RATE_FLOOR); default 1. */
  floorPerSecond: number;
  /** Share cut from the rate on a 429 (BULKORDER_RATE_DECREASE_PERCENT / 100); default 0.1. */
  decrease: number;
  /** Requests per second added to the rate per second of sending at it (BULKORDER_RATE_INCREASE); default 2. */
  increasePerSecond: number;
  /**
   * How the rate adapts (BULKORDER_RATE_ADAPT). `halve` (default): the first 429 starts it at half of
   * what the workers were sending, with the same growth everywhere. `measured`: it starts `decrease`
   * below the rate the API accepted over the last second, and grows a quarter as fast within 5% of the
   * rate the last 429 cut (fewer 429s, but a lower achieved rate on a quiet machine: BENCHMARKS.md).
   */
  adapt: 'measured' | 'halve';
  /**
   * Share of itself the rate grows by per second of sending once it is 5% above the rate of the last
   * 429 and 2 s without one (BULKORDER_RATE_PROBE_PERCENT / 100; default 0.5): no 429 where the last one came means the
   * limit rose, and additive growth would take minutes to find it. 0: additive growth there too.
   */
  probe: number;
}

/**
 * When the circuit breaker opens and how it heals. Read from BULKORDER_BREAKER_* by src/config.ts,
 * which holds the defaults; README "Circuit breaker" gives the reasons for each.
 */
export interface BreakerSettings {
  /** The sliding window the evidence is judged over (BULKORDER_BREAKER_WINDOW_MS); default 60 s. */
  windowMs: number;
  /** Attempts (all outcomes, all workers) the window must hold before it may open; default 20. */
  minAttempts: number;
  /** Distinct orders that must share the failure; default 10, so a few bad rows never open it. */
  minOrders: number;
  /**
   * Distinct customers a refusal must span to count as systemic (BULKORDER_BREAKER_MIN_CUSTOMERS);
   * default 3: one customer the API refuses is that customer's problem, not the API's.
   */
  minCustomers: number;
  /**
   * Distinct batches a refusal must span to be the API's (BULKORDER_BREAKER_MIN_BATCHES); default 2:
   * a refusal confined to one batch's content is that batch's (its canary holds it, not the API).
   */
  minBatches: number;
  /** Share of the window's attempts with the same refusal (status + code) that opens it; default 0.9. */
  refusalRatio: number;
  /**
   * Share of the window's attempts answered 5xx (any mix) or not answered after sending that opens
   * it (BULKORDER_BREAKER_SERVER_FAILING_PERCENT); default 0.5.
   */
  serverFailingRatio: number;
  /** Share with no connection that opens it; default 0.5. */
  unreachableRatio: number;
  /** 401 after a fresh token cannot be about one order: attempts that open it; default 3. */
  credentialsMinAttempts: number;
  /** First wait before trial calls; default 30 s. */
  openMs: number;
  /** The wait doubles on every failed trial up to this; default 10 min. */
  maxOpenMs: number;
  /** Jobs let through when half-open; default 3. */
  trialCalls: number;
  /** Open longer than this: an error log line, `status` and the onBreakerEvent hook say so; default 30 min. */
  alertAfterMs: number;
}

/**
 * One batch's circuit, beside the API's (src/worker/batchCanary.ts, README "Batch canary"). Read from
 * BULKORDER_CANARY_* by src/config.ts, which holds the defaults.
 */
export interface CanarySettings {
  /** The batch's first records that go before the rest (BULKORDER_CANARY_ORDERS); default 20. */
  orders: number;
  /** More than this share of the canary refused with one cause holds the batch (BULKORDER_CANARY_REFUSED_PERCENT); default 50. */
  refusedPercent: number;
  /** A held batch's first probe comes this long after it was held, the next ones twice as late each (BULKORDER_CANARY_PROBE_MS); default 60 s. */
  probeMs: number;
  /** The longest wait between two probes (BULKORDER_CANARY_MAX_PROBE_MS); default 10 min. */
  maxProbeMs: number;
  /**
   * Fewer refusals of one cause never hold a batch (BULKORDER_CANARY_MIN_REFUSED); default 5: a batch of
   * a few orders (a dead letter sent again) is dead-lettered as before, holding it would save no POST.
   */
  minRefused: number;
}

/** The defaults of src/config.ts, for a worker built without settings (tests of one module). */
export const DEFAULT_CANARY: CanarySettings = {
  orders: 20,
  refusedPercent: 50,
  probeMs: 60_000,
  maxProbeMs: 600_000,
  minRefused: 5,
};

/**
 * How a worker spends SIGTERM's grace period: requests in flight get all of it but a closing
 * reserve (Redis connections, token cache, observers: a third of it, at most 2 s), and the process
 * exits `exitByMs` after the signal whatever is still open, so an orchestrator's SIGKILL at the end
 * of the same period never finds it running.
 */
export function shutdownBudget(graceMs: number): { inFlightMs: number; exitByMs: number } {
  const reserve = Math.min(2_000, Math.floor(graceMs / 3));
  return { inFlightMs: graceMs - reserve, exitByMs: graceMs - Math.floor(reserve / 2) };
}

/** How often the wedge guard looks, and after how many looks in a row a wedge is declared (BULKORDER_WEDGE_*). */
export interface WedgeCheckSettings {
  /** Milliseconds between looks (BULKORDER_WEDGE_CHECK_MS, default 10 s); 0 turns the guard off. */
  everyMs: number;
  /** Looks in a row that must each find the wedge (BULKORDER_WEDGE_CHECKS, default 3, at least 2). */
  checks: number;
}

/** The wedge guard's default: a worker left idle beside waiting jobs is healed within about 30 s. */
export const DEFAULT_WEDGE_CHECK: WedgeCheckSettings = { everyMs: 10_000, checks: 3 };
