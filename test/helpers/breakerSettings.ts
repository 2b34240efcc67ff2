/**
 * Circuit-breaker settings tests share (BULKORDER_BREAKER_*; defaults in src/config/configSchema.ts).
 * Spread them into a rig's environment overrides.
 */

/** The breaker opens on the first refused order: one attempt, one order, one customer, 10% refused. */
export const BREAKER_OPENS_ON_ONE_REFUSAL = {
  BULKORDER_BREAKER_MIN_ATTEMPTS: '1',
  BULKORDER_BREAKER_MIN_ORDERS: '1',
  BULKORDER_BREAKER_MIN_CUSTOMERS: '1',
  BULKORDER_BREAKER_REFUSAL_PERCENT: '10',
} as const;

/** Once open, the breaker stays open for the rest of the test (10 minutes): no trial call interferes. */
export const BREAKER_STAYS_OPEN = { BULKORDER_BREAKER_OPEN_MS: '600000' } as const;
