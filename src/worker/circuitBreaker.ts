import type { Redis } from 'ioredis';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';

export interface CircuitBreakerOptions {
  /** Non-order failures in a row (across all workers) that pause delivery; default 5. */
  threshold?: number;
  /** HTTP statuses that cannot be about one order; default 403, 404, 405, 406, 415. */
  systemicStatuses?: readonly number[];
  /** API error codes that cannot be about one order; default the User-Agent, content-type and path refusals. */
  systemicCodes?: readonly string[];
}

export interface BreakerTrip {
  reason: string;
  status?: number;
  code?: string;
  message?: string;
  at: number;
}

const DEFAULT_STATUSES = [403, 404, 405, 406, 415];
const DEFAULT_CODES = ['USER_AGENT_INVALID', 'USER_AGENT_MISSING', 'UNSUPPORTED_MEDIA_TYPE', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'];
/** A streak older than this is forgotten; it must be "in a row", not "ever". */
const STREAK_TTL_MS = 10 * 60 * 1000;

/**
 * Stops a night's file from being dead-lettered order by order when the failure is not
 * about the orders (credentials, User-Agent, a wrong path): after `threshold` such failures
 * in a row, across all workers, the queue is paused and the trip recorded for `status`.
 * Delivery resumes with `bulkorder resume` once the cause is fixed.
 */
export class CircuitBreaker {
  private readonly threshold: number;
  private readonly statuses: ReadonlySet<number>;
  private readonly codes: ReadonlySet<string>;
  private lastReset = 0;
  private sawSystemic = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keyspace,
    private readonly pauseQueue: () => Promise<void>,
    private readonly logger: Logger,
    options: CircuitBreakerOptions = {},
  ) {
    this.threshold = options.threshold ?? 5;
    this.statuses = new Set(options.systemicStatuses ?? DEFAULT_STATUSES);
    this.codes = new Set(options.systemicCodes ?? DEFAULT_CODES);
  }

  /** True when the outcome cannot be about this order: dead-lettering it would be wrong. */
  isSystemic(outcome: ApiOutcome): boolean {
    if (outcome.kind === 'unauthorized') return true;
    if (outcome.kind !== 'permanent') return false;
    return this.statuses.has(outcome.status) || this.codes.has(outcome.code);
  }

  /** Counts a systemic failure; trips (pauses the queue) at the threshold. Returns whether it is tripped. */
  async recordSystemic(outcome: ApiOutcome & { code: string; message: string }): Promise<boolean> {
    // 401 after a fresh token is a credentials problem at once; the rest need a streak.
    return this.countAndTrip(outcome, outcome.kind === 'unauthorized', (count) =>
      outcome.kind === 'unauthorized'
        ? 'The API refuses our credentials even with a fresh token (401): check the client id and secret.'
        : `${count} orders in a row refused for a reason that is not about the order (HTTP ${'status' in outcome ? outcome.status : '?'} ${outcome.code}): check the configuration (User-Agent, base URL).`,
    );
  }

  /**
   * Counts an order sent without an answer. Each such order is held for review (it may exist);
   * a run of them means the API stopped answering, and pausing keeps the rest of the night's
   * orders queued instead of holding them one by one.
   */
  async recordAmbiguous(outcome: ApiOutcome & { code: string; message: string }): Promise<boolean> {
    return this.countAndTrip(outcome, false, (count) =>
      `${count} orders in a row were sent without an answer (${outcome.code}): the API may be down or overloaded. ` +
        'Those orders are held for review (bulkorder review list); the rest stay queued until `bulkorder resume`.',
    );
  }

  private async countAndTrip(outcome: ApiOutcome & { code: string; message: string }, immediately: boolean, reason: (count: number) => string): Promise<boolean> {
    this.sawSystemic = true;
    const streak = await this.redis.multi().incr(this.keys.breakerStreak).pexpire(this.keys.breakerStreak, STREAK_TTL_MS).exec();
    const count = Number(streak?.[0]?.[1] ?? 0);
    if (count < this.threshold && !immediately) return false;
    const trip: BreakerTrip = {
      reason: reason(count),
      code: outcome.code,
      message: outcome.message,
      at: Date.now(),
      ...('status' in outcome && outcome.status !== undefined ? { status: outcome.status } : {}),
    };
    const first = await this.redis.set(this.keys.breakerTrip, JSON.stringify(trip), 'NX');
    await this.pauseQueue();
    if (first === 'OK') this.logger.error({ breaker: trip }, 'circuit breaker tripped: delivery paused; fix the cause, then run `bulkorder resume`');
    return true;
  }

  /** An order-specific outcome breaks the streak. At most one Redis call a second per process. */
  async recordHealthy(): Promise<void> {
    const now = Date.now();
    if (!this.sawSystemic && now - this.lastReset < 1000) return;
    this.lastReset = now;
    this.sawSystemic = false;
    await this.redis.del(this.keys.breakerStreak);
  }

  trip(): Promise<BreakerTrip | undefined> {
    return breakerTrip(this.redis, this.keys);
  }

  /** Clears the trip record (the caller resumes the queue). */
  reset(): Promise<void> {
    return resetBreaker(this.redis, this.keys);
  }
}

/** The breaker's trip record, read without a breaker (status needs no pause callback). */
export async function breakerTrip(redis: Redis, keys: Keyspace): Promise<BreakerTrip | undefined> {
  const raw = await redis.get(keys.breakerTrip);
  return raw === null ? undefined : (JSON.parse(raw) as BreakerTrip);
}

/** Clears the trip record and the streak (`resume`; the caller resumes the queue). */
export async function resetBreaker(redis: Redis, keys: Keyspace): Promise<void> {
  await redis.del(keys.breakerTrip, keys.breakerStreak);
}
