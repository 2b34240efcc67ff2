/**
 * One clock for every process: Redis's. Hosts' clocks may be minutes apart (a VM resumed, NTP
 * off), so every time that more than one process compares (breaker windows and trial times,
 * claim staleness, worker heartbeats, rate slots, notification watermarks, reservations) is
 * read from Redis: inside the Lua scripts (src/lua/includes/redisNow.lua, given REDIS_TIME) or
 * here with TIME. The host's clock only times this process's own waits. BullMQ, which takes its
 * times from Date.now() and has no clock option, is put on Redis's by adoptClock.
 */
import type { Cluster, Redis } from 'ioredis';

type RedisClient = Redis | Cluster;

/** The `now` a script is given so that it reads Redis's TIME itself (src/lua/includes/redisNow.lua). */
export const REDIS_TIME = '';

/** Redis's clock now (ms), one TIME round trip. */
export async function redisTime(redis: RedisClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** How often a RedisClock reads TIME again (the monotonic clock drifts little in that time). */
const RESYNC_MS = 30_000;

/**
 * Redis's clock for a synchronous `now()` (the breaker's and the shared rate's waits, which are
 * compared with times their scripts took from TIME): TIME read at start and every 30 s, the time
 * in between counted on this host's monotonic clock, which no wall-clock step moves. Until
 * `start()` has read TIME once, and while Redis is away, it goes on from the last reading.
 */
export class RedisClock {
  /** Redis's time minus performance.now() at the last reading; 0 offset from the wall clock until then. */
  #offset = Date.now() - performance.now();
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly redis: RedisClient) {}

  /** Reads TIME once (awaited) and then every 30 s until `stop()`. */
  async start(): Promise<this> {
    await this.sync();
    this.#timer ??= setInterval(() => void this.sync().catch(() => undefined), RESYNC_MS);
    this.#timer.unref();
    return this;
  }

  /** Reads TIME; the round trip's midpoint is taken as the moment Redis read it. */
  async sync(): Promise<void> {
    const sent = performance.now();
    const at = await redisTime(this.redis);
    this.#offset = at - (sent + performance.now()) / 2;
  }

  /** Redis's time now (ms), without a round trip. */
  readonly now = (): number => Math.round(performance.now() + this.#offset);

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** The clocks adoptClock put in force, the last one read by Date.now() (a process's worker per kind adopts one each). */
const adopted: RedisClock[] = [];
let beforeAdoption: () => number = Date.now;

/**
 * Makes this process's Date.now() read `clock` (Redis's time) until the returned function undoes
 * it. BullMQ takes from Date.now() the times its peers compare: a delayed job's due time (a retry's
 * backoff, a schedule's next firing) and when it is promoted, and a job scheduler's next slot; a
 * host 10 minutes ahead would fire every schedule early and skip slots. `new Date()` without an
 * argument still reads the host's clock (display and file names only).
 */
export function adoptClock(clock: RedisClock): () => void {
  if (adopted.length === 0) beforeAdoption = Date.now;
  adopted.push(clock);
  Date.now = clock.now;
  return () => {
    const at = adopted.indexOf(clock);
    if (at < 0) return;
    adopted.splice(at, 1);
    // In any order: the clock adopted last that is still adopted, else the one Date.now had before.
    if (Date.now === clock.now) Date.now = adopted.at(-1)?.now ?? beforeAdoption;
  };
}
