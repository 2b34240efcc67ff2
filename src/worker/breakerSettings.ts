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
  /** Share of the window's attempts with the same refusal (status + code) that opens it; default 0.9. */
  refusalRatio: number;
  /** Share with no connection, or with no answer, that opens it; default 0.5. */
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
