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
  /** When the rate was last lowered as this grant was given (ms; 0: never): a later lowering stretches its slots. */
  lowered: number;
}

/** No rate in force: go at once. */
export const UNPACED: RateGrant = { at: 0, spacingMs: 0, paced: false, lowered: 0 };

/** What a delivery needs of the shared rate: wait for a turn; report a 429. */
export interface RequestPacer {
  /**
   * Waits until the first of `n` requests may go (nothing is claimed or sent before, so a stop while
   * waiting costs nothing); the others go at their own slots (`slotOf`), so a chunk's wave is no burst.
   */
  pace(n: number): Promise<RateGrant>;
  /**
   * Waits for request `i` of `grant` (pace's): its own slot, stretched by old rate / new rate from the
   * moment of each lowering of the rate while it waits (cutRate-2.lua stretches the shared schedule
   * alike): a cut paces the requests already waiting, not only later ones. Resolves with the slot the
   * request goes at (slowDown's measure).
   */
  turn(grant: RateGrant, i: number): Promise<RateGrant>;
  /** A request granted with `grant` was answered 429: every worker slows down. */
  slowDown(grant: RateGrant, retryAfterMs: number): Promise<void>;
  /** A request got an answer other than 429: the API accepted it under its limit (the first cut's measure). */
  accepted(): void;
  /** True while a rate is in force: a chunk then paces only the records it may still send. */
  inForce(): boolean;
}

/** `measured`: the probe near the last 429's rate grows this many times slower. */
const SLOW_PROBE = 4;
/**
 * Near or above the last 429's rate, the rate grows by settings.probe (the limit rose) only after this
 * long without a 429: with slots granted at most HORIZON_MS ahead, 2 s of quiet came often just above a
 * steady limit (a sliding window answers 429 seldom at 5% over it), and the rate then grew half again.
 */
const PROBE_QUIET_MS = 5000;
/**
 * No slot is granted further ahead than this (takeRate-1.lua): a cut or a growth of the rate meets the
 * requests within a second, not the seconds of slots granted before (at 10 req/s, 40 requests in
 * flight held four, and the rate swung around the limit). A wave waits for its turn before its claim.
 */
const HORIZON_MS = 1000;

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
  /** The next look for the waves pending (a timer), and when the first of them fits within the horizon. */
  private flushTimer: NodeJS.Timeout | undefined;
  private comeBackAt = 0;
  /** The latest lowering of the shared rate this process knows of (ms), and the last lowerings: older grants stretch. */
  private lowered = 0;
  private lowerings: Lowering[] = [];
  /** Waits for a slot, each woken early by a lowering. */
  private readonly sleepers = new Set<() => void>();
  /** This process's requests in the current and the previous second: the first cut's measure. */
  private sent = { second: 0, current: 0, previous: 0 };
  /** Answers other than 429 not yet added to the shared per-second counts. */
  private unflushed = 0;
  /** This process's answers other than 429 in the current and the previous second (a first rate's floor). */
  private answered = { second: 0, current: 0, previous: 0 };
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
      this.learn(await this.redis.hmget(this.keys.rate, 'rate', 'lowered', 'lowerings'));
      return;
    }
    this.unflushed = 0;
    const bucket = this.keys.rateBuckets + Math.floor(this.now() / 1000);
    const replies = await this.redis
      .pipeline()
      .incrby(bucket, n)
      .pexpire(bucket, 3000)
      .hmget(this.keys.rate, 'rate', 'lowered', 'lowerings')
      .exec();
    this.learn((replies?.[2]?.[1] as (string | null)[] | undefined) ?? []);
  }

  /** Whether a rate is in force, and its latest lowerings (which wake the requests waiting at older slots). */
  private learn([rate, lowered, lowerings]: (string | null | undefined)[]): void {
    this.active = rate !== null && rate !== undefined;
    this.note(Number(lowered ?? 0), lowerings ?? '');
  }

  /** A newer lowering than this process knew of: the requests waiting wake to stretch their slots. */
  private note(lowered: number, lowerings: string): void {
    if (!(lowered > this.lowered)) return;
    this.lowered = lowered;
    this.lowerings = parseLowerings(lowerings);
    for (const wake of [...this.sleepers]) wake();
  }

  async pace(n: number): Promise<RateGrant> {
    this.count(n);
    if (!this.active) return { ...UNPACED, at: this.now() };
    const grant = await new Promise<RateGrant>((resolve, reject) => {
      this.pending.push({ n, resolve, reject });
      this.schedule();
    });
    return this.turn(grant, 0);
  }

  async turn(grant: RateGrant, i: number): Promise<RateGrant> {
    let slot = slotOf(grant, i);
    for (;;) {
      slot = this.stretched(slot);
      if (slot.at <= this.now()) return slot;
      await this.sleepUntilLowered(slot.at);
    }
  }

  /**
   * A slot given before lowerings of the rate that came before it was due, stretched from each
   * lowering's moment by its factor, in order, as cutRate-2.lua stretched the shared schedule then;
   * any other slot as it is.
   */
  private stretched(slot: RateGrant): RateGrant {
    if (!slot.paced || slot.lowered >= this.lowered) return slot;
    let { at, spacingMs, lowered } = slot;
    for (const l of this.lowerings)
      if (l.at > lowered && l.at < at) {
        at = l.at + (at - l.at) * l.stretch;
        spacingMs *= l.stretch;
        lowered = l.at;
      }
    return lowered === slot.lowered ? slot : { ...slot, at, spacingMs, lowered };
  }

  /** Sleeps until `at` on the rate's clock (Redis's), or until the rate is lowered, whichever comes first. */
  private async sleepUntilLowered(at: number): Promise<void> {
    const wait = at - this.now();
    if (wait <= 0) return;
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, wait);
      this.sleepers.add(wake);
    });
  }

  accepted(): void {
    this.unflushed++;
    this.answered = tick(this.answered, this.now(), 1);
  }

  inForce(): boolean {
    return this.active;
  }

  async slowDown(grant: RateGrant, retryAfterMs: number): Promise<void> {
    const s = this.options.settings;
    const now = this.now();
    const measured = s.adapt === 'measured';
    const [, lowered, lowerings] = await this.redis.bulkorderCutRate(
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
        ownAccepted: perWindow(tick(this.answered, now, 0), now),
        measuredStart: measured ? '1' : '0',
        staleMs: WORKER_STALE_MS,
        expireMs: this.options.forgetAfterMs ?? 600_000,
        paced: grant.paced ? '1' : '0',
        startShare: 1 - s.decrease,
      }),
    );
    this.active = true;
    this.note(Number(lowered), lowerings);
  }

  /** A look for the pending waves: at once, or when the first fits within the horizon. */
  private schedule(): void {
    if (this.flushTimer !== undefined || this.pending.length === 0) return;
    this.flushTimer = setTimeout(
      () => {
        this.flushTimer = undefined;
        void this.flush();
      },
      Math.max(0, this.comeBackAt - this.now()),
    );
  }

  /**
   * One script for every wave waiting now: each granted gets its own run of slots; those beyond the
   * horizon wait for the next look.
   */
  private async flush(): Promise<void> {
    const waiters = this.pending.splice(0);
    try {
      const now = this.now();
      const taken = await this.redis.bulkorderTakeRate(
        this.keys.rate,
        this.scriptNow(),
        waiters.reduce((sum, w) => sum + w.n, 0),
        this.options.ceilingPerSecond,
        this.options.settings.increasePerSecond,
        this.options.settings.adapt === 'measured' ? SLOW_PROBE : 1,
        this.options.settings.probe,
        PROBE_QUIET_MS,
        HORIZON_MS,
        waiters.map((w) => w.n).join(','),
      );
      const [at, spacing, state, lowered] = taken.slice(0, 4).map(Number) as [number, number, number, number];
      this.note(lowered, taken[4]);
      this.active = state !== 0;
      this.comeBackAt = state === 2 ? at : 0;
      // Granted: the first waves (state 1); none yet (2: beyond the horizon); every one, unpaced (0: no rate).
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- takeRate-1.lua replies a state of 0, 1 or 2
      const granted = [waiters.length, Number(taken[5]), 0][state]!;
      let slot = 0;
      for (const waiter of waiters.slice(0, granted)) {
        waiter.resolve(
          state === 1 ? { at: at + slot * spacing, spacingMs: spacing, paced: true, lowered } : { ...UNPACED, at: now },
        );
        slot += waiter.n;
      }
      this.pending.unshift(...waiters.slice(granted));
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    } finally {
      this.schedule();
    }
  }

  private count(n: number): void {
    this.sent = tick(this.sent, this.now(), n);
  }

  /** Requests per second this process sent over the last one to two seconds. */
  private localRate(now: number): number {
    this.count(0);
    return ((this.sent.previous + this.sent.current) * 1000) / (1000 + (now % 1000));
  }
}

/** Counts of the current and the previous second, `n` added now. */
interface SecondCounts {
  second: number;
  current: number;
  previous: number;
}

function tick(counts: SecondCounts, now: number, n: number): SecondCounts {
  const second = Math.floor(now / 1000);
  const moved =
    second === counts.second
      ? counts
      : { second, current: 0, previous: second === counts.second + 1 ? counts.current : 0 };
  return { ...moved, current: moved.current + n };
}

/** The counts within the last second: the previous second weighted by its share still in it (cutRate's measure). */
function perWindow(counts: SecondCounts, now: number): number {
  return counts.current + counts.previous * (1 - (now % 1000) / 1000);
}

/** When the shared rate was lowered (ms, Redis's clock), and by how much the slots not yet due were stretched. */
interface Lowering {
  at: number;
  stretch: number;
}

/** cutRate-2.lua's `<ms>:<stretch>;` list, oldest first. */
function parseLowerings(text: string): Lowering[] {
  return text
    .split(';')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [at, stretch] = entry.split(':').map(Number) as [number, number];
      return { at, stretch };
    });
}

/** Request `i` of a grant: its own slot. */
function slotOf(grant: RateGrant, i: number): RateGrant {
  return i === 0 ? grant : { ...grant, at: grant.at + i * grant.spacingMs };
}
