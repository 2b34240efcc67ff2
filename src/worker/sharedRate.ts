import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { RateSettings } from '../deliverySettings.js';
import { WORKER_STALE_MS } from './workerPresence.js';
import { argv } from '../lua/scriptArgv.js';
import { defineScripts } from '../lua/defineScripts.js';
import { REDIS_TIME } from '../redis/redisClock.js';

/** When requests were let go, and whether a shared rate was in force then (a 429's cut depends on it). */
export interface RateGrant {
  /** The first request's slot (ms); request i of the grant goes at `at + i * spacingMs`. */
  at: number;
  spacingMs: number;
  paced: boolean;
}

/** What a delivery needs of the shared rate: wait for a turn; report a 429. */
export interface RequestPacer {
  /**
   * Waits until the first of `n` requests may go (nothing is claimed or sent before, so a stop while
   * waiting costs nothing); the others go at their own slots (`slotOf`), so a chunk's wave is no burst.
   */
  pace(n: number): Promise<RateGrant>;
  /** A request granted with `grant` was answered 429: every worker slows down. */
  slowDown(grant: RateGrant, retryAfterMs: number): Promise<void>;
  /** A request got an answer other than 429: the API accepted it under its limit (the first cut's measure). */
  accepted(): void;
  /** True while a rate is in force: a chunk then paces only the records it may still send. */
  inForce(): boolean;
  /** The clock grants are given in (Redis's, in a worker): a slot is waited for by it, never by the host's. */
  clockNow(): number;
}

/** `measured`: the probe near the last 429's rate grows this many times slower. */
const SLOW_PROBE = 4;
/** Above the last 429's rate, the rate grows by settings.probe only after this long without a 429. */
const PROBE_QUIET_MS = 2000;

export interface SharedRateOptions {
  settings: RateSettings;
  /** The rate never grows past this (BULKORDER_MAX_RPS); 0: no ceiling. */
  ceilingPerSecond: number;
  /** A rate with no 429 for this long is dropped (the limit may have gone); default 10 min. */
  forgetAfterMs?: number;
  /** Pins the time (tests), given to the scripts too; without it the scripts read Redis's TIME. */
  now?: () => number;
  /** Redis's clock for this process's waits (RedisClock.now); default the host's. */
  clock?: () => number;
}

/**
 * The request rate every worker process shares once the API answered 429 (issue 26): held in
 * Redis, cut by a share on a 429 and grown a little with every request sent (additive increase,
 * multiplicative decrease, as TCP and Google's client libraries do), so the workers slow down
 * together instead of pausing and then bursting again at full concurrency. Every process adds its
 * accepted answers to shared per-second counts every 250 ms: a 429 never leaves the rate above
 * just below what the API accepted over the last second (a limit that drops is followed within its
 * window), and with settings.adapt `measured` the first rate starts there and probes slowly near
 * the rate of the last 429 (`halve`: half of what was sent). Above that rate with no 429, the limit
 * has risen and the rate grows by settings.probe of itself per second (issue 37). Without a 429
 * there is no rate and pacing costs a Redis call only every 250 ms; each process learns of a rate
 * from its own 429 or its next look. Callers waiting in the same moment share one script call.
 */
export class SharedRate implements RequestPacer {
  private active = false;
  private pending: { n: number; resolve(grant: RateGrant): void; reject(error: unknown): void }[] = [];
  /** This process's requests in the current and the previous second: the first cut's measure. */
  private sent = { second: 0, current: 0, previous: 0 };
  /** Answers other than 429 not yet added to the shared per-second counts. */
  private unflushed = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  /** What the scripts are given as `now`: REDIS_TIME, or a test's pinned time. */
  private readonly scriptNow: () => number | string;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    private readonly options: SharedRateOptions,
  ) {
    this.now = options.now ?? options.clock ?? Date.now;
    this.scriptNow = options.now ?? (() => REDIS_TIME);
    defineScripts(redis);
  }

  /**
   * Looks for a rate in force now and then every 250 ms until `stop()`; resolves after the first
   * look, so a worker started while a rate is in force paces from its first job.
   */
  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.refresh().catch(() => undefined), 250);
    this.timer.unref();
    await this.refresh().catch(() => undefined);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads whether a rate is in force; adds this process's accepted answers to the shared counts. */
  async refresh(): Promise<void> {
    const n = this.unflushed;
    if (n === 0) {
      this.active = (await this.redis.hexists(this.keys.rate, 'rate')) === 1;
      return;
    }
    this.unflushed = 0;
    const bucket = this.keys.rateBuckets + Math.floor(this.now() / 1000);
    const replies = await this.redis
      .pipeline()
      .incrby(bucket, n)
      .pexpire(bucket, 3000)
      .hexists(this.keys.rate, 'rate')
      .exec();
    this.active = replies?.[2]?.[1] === 1;
  }

  async pace(n: number): Promise<RateGrant> {
    this.count(n);
    if (!this.active) return { at: this.now(), spacingMs: 0, paced: false };
    const grant = await new Promise<RateGrant>((resolve, reject) => {
      this.pending.push({ n, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
    await sleepUntil(grant.at, this.now);
    return grant;
  }

  accepted(): void {
    this.unflushed++;
  }

  inForce(): boolean {
    return this.active;
  }

  clockNow(): number {
    return this.now();
  }

  async slowDown(grant: RateGrant, retryAfterMs: number): Promise<void> {
    const s = this.options.settings;
    const now = this.now();
    const measured = s.adapt === 'measured';
    await this.redis.bulkorderCutRate(
      this.keys.rate,
      this.keys.workers,
      ...argv('cutRate', {
        now: this.scriptNow(),
        retryAfterMs: Math.ceil(retryAfterMs),
        floor: s.floorPerSecond,
        decrease: s.decrease,
        grantedAt: grant.at,
        localRate: this.localRate(now),
        // The shared counts of accepted answers, plus this process's not yet added.
        bucketPrefix: this.keys.rateBuckets,
        accepted: this.unflushed,
        measuredStart: measured ? '1' : '0',
        staleMs: WORKER_STALE_MS,
        expireMs: this.options.forgetAfterMs ?? 600_000,
        paced: grant.paced ? '1' : '0',
        startShare: 1 - s.decrease,
      }),
    );
    this.active = true;
  }

  /** One script for every caller waiting now; each gets its own run of slots and waits for its last. */
  private async flush(): Promise<void> {
    const waiters = this.pending.splice(0);
    const total = waiters.reduce((sum, w) => sum + w.n, 0);
    try {
      const now = this.now();
      const [at, spacing, active] = (
        await this.redis.bulkorderTakeRate(
          this.keys.rate,
          this.scriptNow(),
          total,
          this.options.ceilingPerSecond,
          this.options.settings.increasePerSecond,
          this.options.settings.adapt === 'measured' ? SLOW_PROBE : 1,
          this.options.settings.probe,
          PROBE_QUIET_MS,
        )
      ).map(Number) as [number, number, number];
      this.active = active === 1;
      let slot = 0;
      for (const waiter of waiters) {
        waiter.resolve(
          this.active
            ? { at: at + slot * spacing, spacingMs: spacing, paced: true }
            : { at: now, spacingMs: 0, paced: false },
        );
        slot += waiter.n;
      }
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  private count(n: number): void {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.sent.second)
      this.sent = { second, current: 0, previous: second === this.sent.second + 1 ? this.sent.current : 0 };
    this.sent.current += n;
  }

  /** Requests per second this process sent over the last one to two seconds. */
  private localRate(now: number): number {
    this.count(0);
    return ((this.sent.previous + this.sent.current) * 1000) / (1000 + (now % 1000));
  }
}

/** Request `i` of a grant: its own slot. */
export function slotOf(grant: RateGrant, i: number): RateGrant {
  return i === 0 ? grant : { ...grant, at: grant.at + i * grant.spacingMs };
}

/** Waits until `at` (ms since the epoch); at once when it has passed. */
export async function sleepUntil(at: number, now: () => number = Date.now): Promise<void> {
  const wait = at - now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
