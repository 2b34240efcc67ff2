import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import type { WedgeCheckSettings } from '../deliverySettings.js';

/** BullMQ's keys of the queue that say whether a job may be taken now (`queue.toKey`), and its limiter's max. */
export interface TakeableKeys {
  wait: string;
  prioritized: string;
  /** Delayed jobs (score: due time in ms x 0x1000 + a counter); a due one waits for a worker to promote it. */
  delayed: string;
  meta: string;
  limiter: string;
  /** The worker's `limiter.max`: the limiter key counts jobs taken in its window (`queue.rateLimit` sets it above any max). */
  limitMax: number;
}

/** The TakeableKeys of a queue, from its `toKey` (BullMQ's `queue.toKey`, or QueueKeys' for a queue not opened). */
export function takeableKeys(toKey: (type: string) => string, limitMax: number): TakeableKeys {
  return {
    wait: toKey('wait'),
    prioritized: toKey('prioritized'),
    delayed: toKey('delayed'),
    meta: toKey('meta'),
    limiter: toKey('limiter'),
    limitMax,
  };
}

export interface WedgeGuardOptions extends WedgeCheckSettings {
  redis: RedisClient;
  keys: TakeableKeys;
  /** Jobs this worker started so far (only grows) and jobs it runs now. */
  jobs(): { started: number; running: number };
  /** Whether the worker is paused on purpose (the Redis guard) or stopping: no wedge then. */
  held(): boolean;
  /** Gets the worker's blocking wait going again (a new BullMQ worker). */
  recover(): Promise<void>;
  logger: Logger;
  /** Told after each recovery (metrics). */
  onRecovered?(): void;
}

export interface WedgeGuard {
  /** Looks once now (a look asked for meanwhile joins the running one). */
  check(): Promise<void>;
  stop(): void;
}

/** How long past its due time a delayed job must be to count: a live worker promotes it at once. */
const DUE_SLACK_MS = 1000;

/**
 * Jobs a worker could take now: waiting or prioritized, or delayed and due (workers promote those in
 * their blocking wait, so a wedged worker leaves them delayed: the put-back chunks of a worker idle at
 * a failover, a schedule's firing), the queue neither paused (the breaker, a person: BullMQ keeps a
 * paused queue's jobs in `wait`) nor rate limited (its limiter's count at its max, as BullMQ's
 * moveToActive judges it). One round trip (MULTI: LLEN, ZCARD, ZCOUNT, HEXISTS, GET); the keys share
 * the queue's hash tag, so it runs on a Redis Cluster too. `now`: ms on Redis's clock (adoptClock).
 */
export async function takeableJobs(redis: RedisClient, keys: TakeableKeys, now = Date.now()): Promise<number> {
  const dueBy = (now - DUE_SLACK_MS) * 0x1000 + 0xfff;
  const replies = await redis
    .multi()
    .llen(keys.wait)
    .zcard(keys.prioritized)
    .zcount(keys.delayed, 0, dueBy)
    .hexists(keys.meta, 'paused')
    .get(keys.limiter)
    .exec();
  const values = (replies ?? []).map(([error, value]) => {
    if (error !== null) throw error;
    return Number(value ?? 0);
  });
  const [wait = 0, prioritized = 0, due = 0, paused = 0, taken = 0] = values;
  return paused === 1 || taken >= keys.limitMax ? 0 : wait + prioritized + due;
}

/**
 * The watchdog of a BullMQ worker's blocking wait (issue 37; BullMQ issues 4138, 3185): a worker
 * whose wait went deaf (a Redis Cluster failover) takes nothing, says nothing, for good. Every
 * `everyMs` it looks: this worker runs no job, started none since the last look, is not held, and
 * the queue has takeable jobs. After `checks` such looks in a row it logs WORKER_WEDGED and
 * `recover`s. A busy worker costs no Redis command; an idle one, one round trip per look.
 * A look that fails (Redis away) starts the count again.
 */
export function startWedgeGuard(options: WedgeGuardOptions): WedgeGuard {
  let strikes = 0;
  let lastStarted = options.jobs().started;
  let stopped = false;
  let running: Promise<void> | undefined;
  const look = async (): Promise<void> => {
    const { started, running: runs } = options.jobs();
    const movedOn = started !== lastStarted;
    lastStarted = started;
    if (movedOn || runs > 0 || options.held()) {
      strikes = 0;
      return;
    }
    let waiting: number;
    try {
      waiting = await takeableJobs(options.redis, options.keys);
    } catch {
      strikes = 0;
      return;
    }
    // A job may have started while Redis answered: that is no wedge.
    if (stopped || waiting === 0 || options.jobs().started !== lastStarted) {
      strikes = 0;
      return;
    }
    if (++strikes < options.checks) return;
    strikes = 0;
    options.logger.warn(
      { code: 'WORKER_WEDGED', waiting, looks: options.checks, everyMs: options.everyMs },
      "the worker took no job while jobs waited (BullMQ's blocking wait went deaf, e.g. after a Redis Cluster failover): replacing its BullMQ worker",
    );
    await options.recover();
    lastStarted = options.jobs().started;
    options.onRecovered?.();
  };
  const check = (): Promise<void> => {
    running ??= look()
      .catch((error: unknown) => options.logger.error({ err: error }, 'the wedge guard could not recover the worker'))
      .finally(() => (running = undefined));
    return running;
  };
  const timer = options.everyMs > 0 ? setInterval(() => void check(), options.everyMs) : undefined;
  timer?.unref();
  return {
    check,
    stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
    },
  };
}
