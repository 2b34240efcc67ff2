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
  /** Attempts per order, the first included (BULKORDER_ATTEMPTS); default 21 (1 to 2 hours of retries: see backoff.ts). */
  attempts: number;
  /** BULKORDER_BACKOFF_BASE_MS, BULKORDER_BACKOFF_MAX_MS. */
  backoff: BackoffSettings;
  /** Global cap on requests per second across all workers (BULKORDER_MAX_RPS); 0 = none. */
  maxRequestsPerSecond: number;
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
  /** Non-order failures in a row that pause delivery (BULKORDER_BREAKER_THRESHOLD); default 5. */
  breakerThreshold: number;
  /** How long SIGTERM waits for requests in flight (BULKORDER_SHUTDOWN_GRACE_MS); default 30 s. */
  shutdownGraceMs: number;
  /**
   * How often workers look for jobs whose worker died (BULKORDER_STALLED_INTERVAL_MS); default 30 s.
   * A killed worker's orders come back after about this plus the job lock (request deadline + 5 s).
   */
  stalledIntervalMs: number;
}
