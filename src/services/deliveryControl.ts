import { hostname, userInfo } from 'node:os';
import type { JobsOptions, Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import type { ChunkJobData } from '../deliveryJob.js';
import { CircuitBreaker, readBreakerStatus, type BreakerStatus } from '../worker/circuitBreaker.js';
import type { BreakerSettings } from '../deliverySettings.js';
import { requeueBurst } from '../worker/requeueBurst.js';
import { liveWorkers, type WorkerFacts } from '../worker/workerPresence.js';
import { localTimeOr } from '../timeText.js';

/** What pause, resume and the health report work with (a Services object fits). */
export interface ControlDeps<P = unknown> {
  redis: RedisClient;
  keys: Keyspace;
  queue: Queue<ChunkJobData<P>>;
  ledger: Ledger;
  jobOptions: JobsOptions;
}

/** Who paused a queue by hand, and when. */
export interface PauseRecord {
  by: string;
  at: number;
}

/** Everything that can keep a queue from moving, for `status` and `import --wait`. */
export interface DeliveryHealth {
  paused: boolean;
  pausedBy: PauseRecord | undefined;
  breaker: BreakerStatus;
  workers: WorkerFacts[];
  /** Dead letters the open breaker will send back when it closes (countBurstDeadLetters). */
  burst: number;
}

/** `bulkorder pause`: pauses the queue for every worker and records who did it; the breaker never undoes it. */
export async function pauseDelivery(
  deps: Pick<ControlDeps, 'redis' | 'keys'> & { queue: Pick<Queue, 'pause'> },
  by = `${safeUser()}@${hostname()}`,
): Promise<PauseRecord> {
  const record: PauseRecord = { by, at: Date.now() };
  await deps.redis.set(deps.keys.pausedBy, JSON.stringify(record));
  await deps.queue.pause();
  return record;
}

/**
 * `bulkorder resume`: clears a manual pause, closes the breaker (the person says the cause is
 * fixed: the burst's dead letters go back to the queue) and resumes the queue.
 */
export async function resumeDelivery<P>(
  deps: ControlDeps<P>,
  options: {
    settings: BreakerSettings;
    jobName: string;
    logger: Logger;
    /** Who resumes (default user@host), recorded for the breaker-closed notification. */ by?: string;
  },
): Promise<{ breaker: BreakerStatus; pausedBy: PauseRecord | undefined; requeued: number }> {
  const pausedBy = await readPausedBy(deps);
  const breaker = new CircuitBreaker(deps.redis, deps.keys, options.logger, {
    settings: options.settings,
    pauseQueue: async () => undefined,
    resumeQueue: async () => undefined,
    requeueBurst: (orderKeys) => requeueBurst(orderKeys, { ...deps, jobName: options.jobName }),
  });
  const before = await breaker.status();
  await deps.redis.del(deps.keys.pausedBy);
  const requeued = await breaker.reset();
  // The notifier says who closed it: every breaker-opened gets its breaker-closed, whoever closed it.
  if (before.state !== 'closed')
    await deps.redis.hset(deps.keys.breaker, 'closedBy', `resume by ${options.by ?? `${safeUser()}@${hostname()}`}`);
  await deps.queue.resume();
  return { breaker: before, pausedBy, requeued };
}

export async function readDeliveryHealth(
  deps: Pick<ControlDeps, 'redis' | 'keys'> & { queue: Pick<Queue, 'isPaused'> },
  alertAfterMs: number,
): Promise<DeliveryHealth> {
  const [paused, pausedBy, breaker, workers, burst] = await Promise.all([
    deps.queue.isPaused(),
    readPausedBy(deps),
    readBreakerStatus(deps.redis, deps.keys, alertAfterMs),
    liveWorkers(deps.redis, deps.keys),
    countBurstDeadLetters(deps),
  ]);
  return { paused, pausedBy, breaker, workers, burst };
}

/**
 * The dead letters an open breaker sends back when it closes. A breaker opened by a refusal keeps the
 * orders refused its way in its burst: each is a dead letter (or becomes one as its answer is
 * recorded). One opened by an outage (5xx, no connection) also lists the orders that failed that way
 * while it was open: retried or held for review, not dead letters, and closing does not send them
 * (requeueBurst takes dead ones only); there only the members dead-lettered now are counted.
 */
export async function countBurstDeadLetters(deps: Pick<ControlDeps, 'redis' | 'keys'>): Promise<number> {
  const [trip, members] = await Promise.all([
    deps.redis.hget(deps.keys.breaker, 'class'),
    deps.redis.smembers(deps.keys.breakerBurst),
  ]);
  if (members.length === 0 || trip === 'refusal') return members.length;
  const pipeline = deps.redis.pipeline();
  for (const key of members) pipeline.exists(deps.keys.parked('dead', key));
  const replies = (await pipeline.exec()) ?? [];
  return replies.filter(([, n]) => Number(n) === 1).length;
}

/**
 * Lines that say why a queue may not move and what to do; empty when nothing is wrong.
 * `commands` names this record kind's commands (`bulkorder resume`, `bulkorder worker`).
 */
export function describeHealth(
  health: DeliveryHealth,
  commands: { resume: string; worker: string },
  options: {
    showWorkers?: boolean;
    /** Times in this zone, with the offset (`status`); default ISO UTC. */ timeZone?: string;
  } = {},
): string[] {
  const lines: string[] = [];
  const iso = (at: number | undefined): string =>
    options.timeZone === undefined ? isoTime(at) : localTimeOr(at, options.timeZone);
  const b = health.breaker;
  if (b.state !== 'closed') {
    const probe = b.state === 'halfOpen' ? 'trial jobs are going through now' : `next trial at ${iso(b.nextProbeAt)}`;
    lines.push(
      `circuit breaker ${b.state === 'open' ? 'OPEN' : 'HALF-OPEN'} since ${iso(b.since)}: ${b.reason ?? ''}; ${probe}`,
    );
    if (b.overdue)
      lines.push(
        `  open for too long (since ${iso(b.since)}): fix the cause (${b.signature ?? 'see above'}), then \`${commands.resume}\``,
      );
  }
  if (health.pausedBy !== undefined)
    lines.push(`the queue is paused by ${health.pausedBy.by} since ${iso(health.pausedBy.at)}: \`${commands.resume}\``);
  else if (health.paused && b.state === 'closed') lines.push(`the queue is paused: \`${commands.resume}\``);
  if (health.workers.length === 0) lines.push(`no worker is running: start \`${commands.worker}\``);
  else if (options.showWorkers === true) {
    const hosts = [...new Set(health.workers.map((w) => w.host))];
    lines.push(
      `workers: ${health.workers.length} on ${hosts.join(', ')} (concurrency ${health.workers.reduce((sum, w) => sum + w.concurrency, 0)})`,
    );
  }
  return lines;
}

async function readPausedBy(deps: Pick<ControlDeps, 'redis' | 'keys'>): Promise<PauseRecord | undefined> {
  const json = await deps.redis.get(deps.keys.pausedBy);
  return json === null ? undefined : (JSON.parse(json) as PauseRecord);
}

function isoTime(at: number | undefined): string {
  return at === undefined ? 'unknown' : new Date(at).toISOString();
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'someone';
  }
}
