/**
 * Circuit-breaker settings tests share (BULKORDER_BREAKER_*; defaults in src/config/configSchema.ts).
 * Spread them into a rig's environment overrides.
 */

/** The breaker opens on the first refused order: one attempt, one order, one customer, 10% refused. */
export const BREAKER_OPENS_ON_ONE_REFUSAL = {
  BULKORDER_BREAKER_MIN_ATTEMPTS: '1',
  BULKORDER_BREAKER_MIN_ORDERS: '1',
  BULKORDER_BREAKER_MIN_CUSTOMERS: '1',
  BULKORDER_BREAKER_MIN_BATCHES: '1',
  BULKORDER_BREAKER_REFUSAL_PERCENT: '10',
} as const;

/** Once open, the breaker stays open for the rest of the test (10 minutes): no trial call interferes. */
export const BREAKER_STAYS_OPEN = { BULKORDER_BREAKER_OPEN_MS: '600000' } as const;

/** A canary of one order: a batch's first answer judges it at once (by default the first orders of a batch are its canary). */
export const CANARY_OF_ONE = { BULKORDER_CANARY_ORDERS: '1' } as const;

/**
 * The API-wide breaker alone: one batch's refusals count as the API's (by default a cause confined to one batch is that
 * batch's, held by its canary: test/reliability/batchCanary.test.ts), and a canary of one order judges at once.
 */
export const ONE_BATCH_IS_THE_API = { BULKORDER_BREAKER_MIN_BATCHES: '1', ...CANARY_OF_ONE } as const;
