import type { Logger } from '../logger.js';
import { redisRisk, type RedisClient, type RedisRisk } from '../redis.js';

/** What the worker does while CONFIG is refused and eviction or persistence cannot be proven (BULKORDER_REDIS_CHECK_UNVERIFIABLE). */
export type UnverifiablePolicy = 'pause' | 'run';

/** When a Redis counts as unsafe to take jobs from (config: BULKORDER_REDIS_CHECK_*, BULKORDER_ENV). */
export interface RedisGuardPolicy {
  /** Production (unless BULKORDER_ALLOW_VOLATILE_REDIS=yes): a Redis without persistence is unsafe too. */
  requirePersistence: boolean;
  /** Default `run`: a managed Redis that refuses CONFIG is trusted on what INFO says. */
  unverifiable: UnverifiablePolicy;
  /**
   * Production (unless BULKORDER_ALLOW_UNVERIFIED_REDIS=yes): a Redis that refuses this user CONFIG and INFO
   * both, so that nothing about it is known, is unsafe too. Default false.
   */
  requireVerifiable?: boolean;
}

/** Why a Redis is unsafe; stable codes, as `/readyz`, `status --json` and notifications give them. */
export type RedisUnsafeCode = 'REDIS_EVICTION_POLICY' | 'REDIS_NOT_PERSISTENT' | 'REDIS_UNVERIFIABLE';

export interface RedisSafety {
  unsafe: boolean;
  code?: RedisUnsafeCode;
  /** One line for a person. */
  reason?: string;
}

/**
 * The one decision whether a Redis is fit to take jobs from, for the worker's guard and for what
 * `status` and the dashboard say: eviction always pauses (a queued job or a ledger entry may vanish,
 * and a re-import then sends again); no persistence pauses in production; a Redis that refuses
 * CONFIG pauses only with BULKORDER_REDIS_CHECK_UNVERIFIABLE=pause; one that refuses CONFIG and INFO
 * (nothing known) with that too, or in production unless BULKORDER_ALLOW_UNVERIFIED_REDIS=yes.
 */
export function redisSafety(risk: RedisRisk, policy: RedisGuardPolicy): RedisSafety {
  if (!risk.known)
    return policy.requireVerifiable === true || policy.unverifiable === 'pause'
      ? {
          unsafe: true,
          code: 'REDIS_UNVERIFIABLE',
          reason:
            'Redis refuses this user CONFIG and INFO, so eviction and persistence cannot be checked; ' +
            'BULKORDER_ALLOW_UNVERIFIED_REDIS=yes (production) and BULKORDER_REDIS_CHECK_UNVERIFIABLE=run accept it',
        }
      : { unsafe: false };
  if (risk.evicting)
    return {
      unsafe: true,
      code: 'REDIS_EVICTION_POLICY',
      reason: `Redis evicts keys (maxmemory-policy ${risk.policy ?? '?'}): queued orders and ledger entries may vanish; set it to noeviction`,
    };
  if (!risk.persistent && policy.requirePersistence)
    return {
      unsafe: true,
      code: 'REDIS_NOT_PERSISTENT',
      reason: `Redis does not persist its data (${risk.evidence}): a restart forgets what was delivered; turn on AOF or RDB snapshots`,
    };
  if (!risk.verified && policy.unverifiable === 'pause')
    return {
      unsafe: true,
      code: 'REDIS_UNVERIFIABLE',
      reason: `Redis refuses CONFIG, so eviction and persistence cannot be checked (${risk.evidence}); BULKORDER_REDIS_CHECK_UNVERIFIABLE=run trusts INFO`,
    };
  return { unsafe: false };
}

export interface RedisGuardOptions extends RedisGuardPolicy {
  redis: RedisClient;
  /** How often Redis is looked at (BULKORDER_REDIS_CHECK_MS); default 5 s. */
  checkMs?: number;
  /** Stops taking jobs; jobs in flight finish (BullMQ `worker.pause(true)`). */
  pause(): Promise<void>;
  /** Takes jobs again. */
  resume(): void;
  logger: Logger;
  /** Told of every change (and of the first look): metrics, `/readyz`, notifications. */
  onChange?(safety: RedisSafety): void;
}

export interface RedisGuard {
  /** What the last look found (safe until a look found otherwise). */
  safety(): RedisSafety;
  /** Looks now (one look at a time; a look asked for meanwhile joins the running one). */
  check(): Promise<RedisSafety>;
  stop(): void;
}

/**
 * Looks at Redis every `checkMs` and pauses the worker while Redis is unsafe (redisSafety), resuming
 * when it is fit again. A look that fails (Redis away) changes nothing: a Redis that does not answer
 * gives no jobs anyway, and BullMQ reconnects on its own.
 */
export function startRedisGuard(options: RedisGuardOptions): RedisGuard {
  let current: RedisSafety = { unsafe: false };
  let running: Promise<RedisSafety> | undefined;
  let stopped = false;
  const look = async (): Promise<RedisSafety> => {
    let next: RedisSafety;
    try {
      next = redisSafety(await redisRisk(options.redis), options);
    } catch {
      return current;
    }
    if (stopped || (next.unsafe === current.unsafe && next.code === current.code)) return current;
    const was = current;
    current = next;
    if (next.unsafe) {
      options.logger.error({ code: next.code }, `${next.reason}: this worker takes no jobs until it is fixed`);
      if (!was.unsafe) await options.pause();
    } else {
      options.logger.info({ was: was.code }, 'Redis is safe again: this worker takes jobs again');
      options.resume();
    }
    options.onChange?.(next);
    return current;
  };
  const check = (): Promise<RedisSafety> => {
    running ??= look().finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => void check(), options.checkMs ?? 5_000);
  timer.unref();
  void check();
  return {
    safety: () => current,
    check,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
