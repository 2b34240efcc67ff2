import type { Processor, Queue, Worker } from 'bullmq';
import { bullmq } from '../cjsPackages.js';
import { hostname } from 'node:os';
import { keyspace, type Keyspace } from '../keyspace.js';
import { Ledger } from '../ledger/ledger.js';
import { ensureNamespaceMarker } from '../ledger/namespaceMarker.js';
import { bulkorderVersion } from '../paths.js';
import type { Logger } from '../logger.js';
import { countRuns, IDLE_CLOSE_MS, whenIdle } from './idleClose.js';
import type { ChunkJobData } from '../deliveryJob.js';
import type { QueuedJobData } from '../ledger/jobData.js';
import { assertRedisReady, createRedis, type RedisClient, type RedisEndpoint } from '../redis.js';
import { BACKOFF_TYPE, deliveryJobOptions } from '../queues.js';
import { BatchStore } from '../batches/batchStore.js';
import { startReconciler } from '../importer/reconcileImports.js';
import { wakeBatchJobs } from '../batches/wakeBatch.js';
import { PutBackChunks } from '../batches/putBackChunks.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import { DEFAULT_CANARY, DEFAULT_WEDGE_CHECK, shutdownBudget, type DeliverySettings } from '../deliverySettings.js';
import type { RecordKind } from '../kinds/recordKind.js';
import { backoffDelay } from '../worker/backoff.js';
import { BatchCanary, type BatchCircuitEvent } from '../worker/batchCanary.js';
import { CircuitBreaker, type BreakerEvent } from '../worker/circuitBreaker.js';
import { requeueBurst } from '../worker/requeueBurst.js';
import { throttledErrors } from '../worker/throttledErrors.js';
import { startPresence } from '../worker/workerPresence.js';
import { RetryableDeliveryError, type DeliveryResult } from '../worker/deliveryDeps.js';
import { parkOrphan, type OrphanDeps } from '../worker/parkOrphan.js';
import { startRedisGuard, type RedisGuard, type RedisSafety } from '../worker/redisGuard.js';
import { startWedgeGuard, takeableKeys, type WedgeGuard } from '../worker/wedgeGuard.js';
import { RenewableWorker } from './renewableWorker.js';
import { RequestSlots } from '../worker/requestSlots.js';
import { SharedRate } from '../worker/sharedRate.js';
import type { DeliveryMetricsSink, MetricsApi, OrderOutcome } from '../metrics/bulkorderMetrics.js';
import { traceDelivery } from '../metrics/traceDelivery.js';
import type { Tracing } from '../tracing/tracing.js';
import { observeDelivery } from '../metrics/observeDelivery.js';
// The worker assembly is the one place src/ imports jobs/ (README, Design): it hands the processor its effects.
import { createDeliveryProcessor } from '../../jobs/deliveryProcessor.js';
import { adoptClock, RedisClock } from '../redis/redisClock.js';

/** Jobs per second that stand for "no limit" (see the limiter below). */
const UNLIMITED_PER_SECOND = 1_000_000_000;

/** The BullMQ worker's limiter: BULKORDER_MAX_RPS jobs a second, or a limit too high to reach. */
function limiterMax(delivery: DeliverySettings): number {
  return delivery.maxRequestsPerSecond > 0 ? delivery.maxRequestsPerSecond : UNLIMITED_PER_SECOND;
}

export interface DeliveryWorkerOptions<P> {
  /** Where Redis is (one server or a cluster; src/config.ts). */
  endpoint: RedisEndpoint;
  /** The record kind: its queue, keyspace, retention and wording. */
  kind: RecordKind<P>;
  /** The target's key prefix, `bulkorder:<env>:<id>` (redisPrefix(config, kind.api)); the kind's keyspace is under it. */
  prefix: string;
  delivery: DeliverySettings;
  /** The API call that creates one record (src/delivery); returns a classified outcome, never throws for HTTP failures. */
  send(payload: P, record: { key: string; batchId?: string }): Promise<ApiOutcome>;
  /** OpenTelemetry (OTEL_*): jobs carry their batch's trace; each POST is a span. None when off. */
  tracing?: Tracing;
  /** The HTTP deadline of one call: the job lock must outlast it. */
  requestDeadlineMs: number;
  logger: Logger;
  /** A Redis connection for the shared token cache and the ledger; made here when not given. */
  redis?: RedisClient;
  /** Breaker transitions (opened, reopened, halfOpen, closed, stuck), once across all workers: the notification hook. */
  onBreakerEvent?(event: BreakerEvent): void | Promise<void>;
  /** Called once per transition of a batch's circuit (held, resumed), across all workers: notifications. */
  onBatchCircuitEvent?(event: BatchCircuitEvent): void | Promise<void>;
  /** Counts requests and outcomes (src/metrics); `api` labels them. */
  metrics?: { sink: DeliveryMetricsSink; api: MetricsApi };
  /** Called when a job of a batch ended for good (notifications check whether the batch settled). */
  onJobEnded?(batchId: string): void;
  /** Told when the Redis guard pauses or resumes this worker (metrics, `/readyz`, notifications). */
  onRedisSafety?(safety: RedisSafety): void;
  /**
   * Run this process's Date.now() on Redis's clock while the worker runs (adoptClock), so BullMQ's
   * delayed jobs and schedules are timed on it: a worker process (`bulkorder worker`, `watch
   * --deliver`). Default false: a library caller's process keeps its own clock.
   */
  adoptRedisClock?: boolean;
}

export interface DeliveryWorker<P> {
  /** The BullMQ worker now: the wedge guard may replace it (listeners added to an earlier one stay there). */
  readonly worker: Worker<QueuedJobData<P>, DeliveryResult>;
  /** Takes no new jobs, lets requests in flight finish within the grace period, then closes. */
  close(): Promise<void>;
}

/**
 * A delivery worker process's BullMQ side: any number of these may run on any hosts. The
 * job lock outlasts the request deadline (so a slow request never loses its lock to a second
 * worker), retries use src/worker/backoff.ts, and a job that BullMQ fails without our
 * processor having parked it (stalled too often, an unexpected error on the last attempt)
 * is parked here, so no order ends without a state a person can see.
 */
export async function startDeliveryWorker<P>(options: DeliveryWorkerOptions<P>): Promise<DeliveryWorker<P>> {
  const { delivery, logger, kind, metrics } = options;
  const prefix = kind.prefix(options.prefix);
  const { queueName, wording } = kind;
  const keys = keyspace(prefix);
  const commands = await openCheckedRedis(options, keys);
  const ledger = createLedger(commands, keys, options);
  const batches = new BatchStore(commands, keys, kind.retentionMs(delivery));
  const batchFile = cachedBatchFiles(batches);
  const queue = new (bullmq().Queue)<ChunkJobData<P>>(queueName, {
    connection: commands,
    prefix,
    ...bullTelemetry(options.tracing),
  });
  // Redis's clock: the breaker's and the rate's waits end at times their scripts took from TIME.
  const clock = await new RedisClock(commands).start();
  // Before the BullMQ worker exists: its first fetch already promotes delayed jobs by Date.now().
  const unadopt = options.adoptRedisClock === true ? adoptClock(clock) : () => undefined;
  const breaker = createBreaker(options, { commands, keys, ledger, queue, now: clock.now });
  const putBack = new PutBackChunks(commands, keys, (delivery.canary ?? DEFAULT_CANARY).orders);
  const canary = createCanary(commands, keys, { options, queue, putBack, ledger });
  const logRedisError = throttledErrors(logger, 'Redis unavailable to the worker; BullMQ reconnects on its own');
  const ticker = setInterval(() => void breaker.tick().catch(logRedisError), 1000).unref();
  const presence = startPresence(commands, keys, { queue: queueName, concurrency: delivery.concurrency });

  // Requests in flight in this process, shared by all its jobs.
  const slots = new RequestSlots(delivery.concurrency);
  const rate = await startSharedRate(commands, keys, { delivery, now: clock.now });
  let stopping = false;
  // Aborted once the worker has stopped: an answer's settle that Redis still refuses is given up then.
  const ended = new AbortController();
  const logRefused = throttledErrors(
    logger,
    'Redis refuses to record answers the API gave (out of memory or away); each is retried until Redis takes it',
  );
  // Settles waiting for Redis: a stopping worker gives each its last resort before it disconnects.
  const waitingSettles = new Set<Promise<unknown>>();
  const processor = createDeliveryProcessor<P>({
    recordRetry: { stopped: ended.signal, onRefused: logRefused, waiting: waitingSettles },
    send: observedSend(options),
    slots,
    isClosing: () => stopping,
    ...(kind.payloadCodec === undefined ? {} : { codec: kind.payloadCodec }),
    ...(metrics === undefined
      ? {}
      : { onRecordEnded: (outcome: OrderOutcome) => metrics.sink.order(metrics.api, outcome) }),
    wording,
    customerOf: (payload: P) => kind.customerOf(payload),
    ledger,
    breaker,
    canary,
    batchFile,
    logger,
    rate,
    putBack,
  });
  const running = countRuns(processor);
  const bull = renewableWorker(options, { processor: running.processor, onError: logRedisError, ledger, batchFile });
  // Without a listener BullMQ prints every connection error raw to stderr.
  queue.on('error', logRedisError);

  const guard = guardRedis(bull, commands, options);
  const wedge = guardWedge(bull, { commands, queue, running, isStopping: () => stopping }, options);
  // An importer that died (SIGKILL, lost host) left reservations whose jobs it never added: queue them.
  const jobOptions = deliveryJobOptions(delivery);
  const reconciler = startReconciler({ ledger, batches, queue, jobOptions, logger, codec: kind.payloadCodec });
  logger.info(
    { queue: queueName, concurrency: delivery.concurrency, attempts: delivery.attempts, prefix },
    'delivery worker started',
  );
  let closing: Promise<void> | undefined;
  return {
    get worker() {
      return bull.worker;
    },
    close() {
      closing ??= (async () => {
        stopping = true;
        clearInterval(ticker);
        for (const part of [guard, wedge, reconciler, rate, clock]) part.stop();
        const { worker, connection: blocking } = bull;
        const parts = { worker, presence, queue, blocking, commands, ended, waitingSettles };
        await closeConnections(options, parts, running.count);
        unadopt();
      })();
      return closing;
    },
  };
}

/**
 * The worker's command connection (the one given, or one made here) once Redis proved fit for
 * delivery and its namespace is not a newer bulkorder's; a connection made here is closed when not.
 */
async function openCheckedRedis<P>(options: DeliveryWorkerOptions<P>, keys: Keyspace): Promise<RedisClient> {
  const { delivery } = options;
  const commands = options.redis ?? createRedis(options.endpoint, 'worker');
  try {
    await assertRedisReady(commands, options.endpoint.redisUrl, {
      requirePersistence: delivery.requirePersistentRedis,
      requireVerifiable: delivery.requireVerifiableRedis,
    });
    // A worker of an older bulkorder must not take jobs of a newer one's namespace (README "Deployment").
    await ensureNamespaceMarker(commands, keys, { processVersion: bulkorderVersion() });
  } catch (error) {
    if (options.redis === undefined) commands.disconnect();
    throw error;
  }
  return commands;
}

/** The kind's ledger: its queue, retention and what an ambiguous answer does. */
function createLedger<P>(commands: RedisClient, keys: Keyspace, options: DeliveryWorkerOptions<P>): Ledger {
  const { delivery, kind } = options;
  return new Ledger(commands, keys, {
    queueName: kind.queueName,
    retentionMs: kind.retentionMs(delivery),
    parkedRetentionMs: delivery.parkedRetentionMs,
    ambiguousPolicy: delivery.ambiguousPolicy,
  });
}

/** The per-batch circuit: holds a batch whose orders keep failing, probes it, and tells `onBatchCircuitEvent`. */
function createCanary<P>(
  commands: RedisClient,
  keys: Keyspace,
  worker: { options: DeliveryWorkerOptions<P>; queue: Queue<ChunkJobData<P>>; putBack: PutBackChunks; ledger: Ledger },
): BatchCanary {
  const { options, queue, putBack, ledger } = worker;
  const { delivery } = options;
  return new BatchCanary(commands, keys, options.logger, {
    ...(delivery.canary === undefined ? {} : { settings: delivery.canary }),
    probeTimeoutMs: options.requestDeadlineMs + 10_000,
    wake: async (batchId) => {
      await wakeBatchJobs(queue, putBack, batchId);
    },
    ended: async (orderKeys) =>
      (await ledger.getMany(orderKeys)).map((entry) => {
        if (entry?.state === 'delivered') return 'accepted';
        return entry?.state === 'held' || entry?.state === 'dead' ? 'neutral' : undefined;
      }),
    ...(options.onBatchCircuitEvent === undefined ? {} : { onEvent: options.onBatchCircuitEvent }),
  });
}

/** After a 429 every worker process paces its requests from one rate in Redis (on Redis's clock, `now`). */
async function startSharedRate(
  commands: RedisClient,
  keys: Keyspace,
  pacing: { delivery: DeliverySettings; now: () => number },
): Promise<SharedRate> {
  const rate = new SharedRate(commands, keys, {
    settings: pacing.delivery.rate,
    ceilingPerSecond: pacing.delivery.maxRequestsPerSecond,
    clock: pacing.now,
  });
  await rate.start();
  return rate;
}

/** BullMQ's OpenTelemetry hook for the worker and its queue; none when tracing is off. */
function bullTelemetry(tracing: Tracing | undefined): { telemetry?: Tracing['bullmq'] } {
  return tracing === undefined ? {} : { telemetry: tracing.bullmq };
}

/** What the circuit breaker acts on: the kind's Redis, ledger and queue, on Redis's clock. */
interface BreakerParts<P> {
  commands: RedisClient;
  keys: Keyspace;
  ledger: Ledger;
  queue: Queue<ChunkJobData<P>>;
  /** Redis's time (RedisClock.now). */
  now: () => number;
}

/**
 * The circuit breaker shared by every worker of the kind: it pauses and resumes the queue (never
 * undoing a person's pause) and requeues the orders a burst of failures held.
 */
function createBreaker<P>(options: DeliveryWorkerOptions<P>, parts: BreakerParts<P>): CircuitBreaker {
  const { delivery, kind } = options;
  const { commands, keys, ledger, queue } = parts;
  return new CircuitBreaker(commands, keys, options.logger, {
    clock: parts.now,
    settings: delivery.breaker,
    pauseQueue: () => queue.pause(),
    resumeQueue: async () => {
      // A person's pause wins: the breaker only undoes its own.
      if ((await commands.exists(keys.pausedBy)) === 0) await queue.resume();
    },
    requeueBurst: (orderKeys) =>
      requeueBurst(orderKeys, {
        redis: commands,
        keys,
        ledger,
        queue,
        jobName: kind.jobName,
        jobOptions: deliveryJobOptions(delivery),
      }),
    trialTimeoutMs: options.requestDeadlineMs + 10_000,
    ...(options.onBreakerEvent === undefined ? {} : { onBreakerEvent: options.onBreakerEvent }),
  });
}

/** The API call as the processor makes it: a span per POST when tracing is on, counted when metrics are. */
function observedSend<P>(options: DeliveryWorkerOptions<P>): DeliveryWorkerOptions<P>['send'] {
  const traced =
    options.tracing === undefined ? options.send : traceDelivery(options.send, options.tracing, options.kind.api);
  return options.metrics === undefined ? traced : observeDelivery(traced, options.metrics.sink, options.metrics.api);
}

/** The BullMQ worker's own connection and the processor it runs each job with. */
interface BullWorkerParts<P> {
  /** A connection for BullMQ's blocking commands, used by nothing else. */
  connection: RedisClient;
  processor: Processor<QueuedJobData<P>, DeliveryResult>;
  /** Start fetching at once (false: a replacement for a worker the Redis guard holds paused). */
  autorun: boolean;
}

/**
 * The BullMQ worker of the kind's queue: named after host, process and concurrency, a lock that
 * outlasts one request, always a limiter, and our backoff for retries.
 */
function createBullWorker<P>(
  options: DeliveryWorkerOptions<P>,
  parts: BullWorkerParts<P>,
): Worker<QueuedJobData<P>, DeliveryResult> {
  const { delivery, kind } = options;
  return new (bullmq().Worker)<QueuedJobData<P>, DeliveryResult>(kind.queueName, parts.processor, {
    connection: parts.connection,
    autorun: parts.autorun,
    prefix: kind.prefix(options.prefix),
    ...bullTelemetry(options.tracing),
    // getWorkers() shows this name: which host and process, at what concurrency.
    name: `${hostname()}:${process.pid}:${delivery.concurrency}`,
    // As many jobs as request slots, though a chunk holds several records: the jobs beyond the slots wait their turn
    // ready (two waves' worth of jobs, measured on the delivery bench, used no less CPU per order).
    concurrency: delivery.concurrency,
    // The lock is renewed every half lockDuration while a job runs; it also outlasts one request,
    // so even a missed renewal cannot hand a job in flight to a second worker.
    lockDuration: options.requestDeadlineMs + 5_000,
    stalledInterval: delivery.stalledIntervalMs,
    maxStalledCount: delivery.maxStalls,
    // Always a limiter: BullMQ honours a manual rateLimit() only for workers that have one, so
    // "no limit" is a limit too high to reach.
    limiter: { max: limiterMax(delivery), duration: 1000 },
    settings: {
      backoffStrategy: (attemptsMade, type, error) =>
        type === BACKOFF_TYPE
          ? backoffDelay(
              attemptsMade,
              delivery.backoff,
              error instanceof RetryableDeliveryError ? error.retryAfterMs : undefined,
            )
          : 0,
    },
  });
}

/**
 * The BullMQ worker (replaceable: the wedge guard), each on a connection of its own made after the
 * Redis check ran (a user without INFO is then known, and the client made without it), each wired
 * to log errors, park what BullMQ failed for good and tell `onJobEnded`.
 */
function renewableWorker<P>(
  options: DeliveryWorkerOptions<P>,
  parts: {
    processor: Processor<QueuedJobData<P>, DeliveryResult>;
    onError: (error: Error) => void;
    ledger: Ledger;
    batchFile: (batchId: string) => Promise<string>;
  },
): RenewableWorker<QueuedJobData<P>, DeliveryResult> {
  const { logger, kind } = options;
  const { processor, ledger, batchFile } = parts;
  return new RenewableWorker<QueuedJobData<P>, DeliveryResult>({
    connect: () => createRedis(options.endpoint, 'worker'),
    create: (connection, autorun) => createBullWorker(options, { connection, processor, autorun }),
    wire(worker) {
      worker.on('error', parts.onError);
      const noun = kind.wording.noun;
      parkFailedJobs(worker, options, { ledger, logger, noun, batchFile, codec: kind.payloadCodec });
      if (options.onJobEnded !== undefined) watchJobEnds(worker, options.onJobEnded);
    },
  });
}

/** Parks what a job BullMQ failed for good left without a state (parkOrphan), and counts each record parked. */
function parkFailedJobs<P>(
  worker: Worker<QueuedJobData<P>, DeliveryResult>,
  options: DeliveryWorkerOptions<P>,
  deps: OrphanDeps<P>,
): void {
  worker.on('failed', (job, error) => {
    if (job === undefined) return;
    void parkOrphan(job, error, deps).then((parked) => {
      for (const kept of parked)
        options.metrics?.sink.order(options.metrics.api, kept === 'dead' ? 'dead_lettered' : 'held');
    });
  });
}

/** A Redis that starts evicting (or forgets, in production) while we run: take no jobs until it is fixed. */
function guardRedis<P>(
  worker: RenewableWorker<QueuedJobData<P>, DeliveryResult>,
  redis: RedisClient,
  options: DeliveryWorkerOptions<P>,
): RedisGuard {
  const { delivery } = options;
  return startRedisGuard({
    redis,
    checkMs: delivery.redisCheck.everyMs,
    requirePersistence: delivery.requirePersistentRedis,
    requireVerifiable: delivery.requireVerifiableRedis,
    unverifiable: delivery.redisCheck.unverifiable,
    pause: () => worker.pause(),
    resume: () => worker.resume(),
    logger: options.logger,
    ...(options.onRedisSafety === undefined ? {} : { onChange: options.onRedisSafety }),
  });
}

/** What the wedge guard looks at besides the BullMQ worker. */
interface WedgeParts<P> {
  commands: RedisClient;
  queue: Queue<ChunkJobData<P>>;
  running: { count(): number; started(): number };
  isStopping(): boolean;
}

/**
 * An idle worker whose blocking wait went deaf (a Redis Cluster failover; BullMQ issues 4138, 3185)
 * gets a new BullMQ worker once jobs waited for it over BULKORDER_WEDGE_CHECKS looks in a row.
 */
function guardWedge<P>(
  bull: RenewableWorker<QueuedJobData<P>, DeliveryResult>,
  parts: WedgeParts<P>,
  options: DeliveryWorkerOptions<P>,
): WedgeGuard {
  const { metrics } = options;
  return startWedgeGuard({
    ...(options.delivery.wedgeCheck ?? DEFAULT_WEDGE_CHECK),
    redis: parts.commands,
    keys: takeableKeys((type) => parts.queue.toKey(type), limiterMax(options.delivery)),
    jobs: () => ({ started: parts.running.started(), running: parts.running.count() }),
    held: () => parts.isStopping() || bull.worker.isPaused(),
    recover: () => bull.renew(),
    logger: options.logger,
    ...(metrics === undefined ? {} : { onRecovered: () => metrics.sink.workerRecovered(metrics.api) }),
  });
}

/** What a stopping worker closes once its timers are stopped, in order. */
interface WorkerConnections<P> {
  worker: Worker<QueuedJobData<P>, DeliveryResult>;
  presence: { stop(): Promise<void> };
  queue: Queue<ChunkJobData<P>>;
  blocking: RedisClient;
  commands: RedisClient;
  /** Aborted here: settles Redis still refuses are given up after their last resort. */
  ended: AbortController;
  /** Settles still waiting for Redis. */
  waitingSettles: Set<Promise<unknown>>;
}

/**
 * Closes the worker within the grace period (requests in flight finish; past it, unfinished jobs
 * come back as stalled), gives refused settles their last resort, closes the queue and the
 * connections, and logs how the worker stopped.
 */
async function closeConnections<P>(
  options: DeliveryWorkerOptions<P>,
  parts: WorkerConnections<P>,
  runningJobs: () => number,
): Promise<void> {
  const { delivery, logger } = options;
  const { commands } = parts;
  const queueName = options.kind.queueName;
  const inTime = await closeWorkerInTime(
    { ...parts, runningJobs },
    {
      inFlightMs: shutdownBudget(delivery.shutdownGraceMs).inFlightMs,
      logger,
    },
  );
  // Settles Redis still refuses (full) get their last resort, above maxmemory, before we disconnect.
  parts.ended.abort();
  await Promise.race([
    Promise.allSettled([...parts.waitingSettles]),
    new Promise((resolve) => setTimeout(resolve, 2000).unref()),
  ]);
  await Promise.race([
    parts.queue.close().catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, 1000).unref()),
  ]);
  parts.blocking.disconnect();
  if (options.redis === undefined) commands.disconnect();
  if (inTime) logger.info({ queue: queueName }, 'delivery worker stopped');
  else
    logger.warn(
      { queue: queueName, graceMs: delivery.shutdownGraceMs, redis: commands.status },
      'delivery worker stopped at the end of the grace period (requests in flight or Redis unreachable); unfinished jobs come back as stalled',
    );
}

/**
 * Withdraws the worker's presence and closes it, waiting at most `inFlightMs`; past that the
 * worker is closed by force. Whether it closed in time. Once no job of this process runs, BullMQ's
 * close is given {@link IDLE_CLOSE_MS} more, and the worker stops without it (src/assembly/idleClose.ts).
 */
async function closeWorkerInTime<P>(
  parts: Pick<WorkerConnections<P>, 'worker' | 'presence'> & { runningJobs: () => number },
  options: { inFlightMs: number; logger: Logger },
): Promise<boolean> {
  const { worker, presence, runningJobs } = parts;
  // Everything below may hang on a Redis that is down: the grace period bounds the whole of it.
  const withdrawn = presence.stop();
  const stopped = (async () => {
    await withdrawn;
    await worker.close();
    return true as const;
  })().catch(() => false as const);
  const idleWait = whenIdle(runningJobs, withdrawn);
  const idle = idleWait.idle;
  const ended = await Promise.race([
    stopped,
    idle,
    new Promise<false>((resolve) => setTimeout(() => resolve(false), options.inFlightMs).unref()),
  ]);
  idleWait.stop();
  if (ended === 'idle') {
    options.logger.warn(
      { afterMs: IDLE_CLOSE_MS },
      "BullMQ's worker did not close after its last job (its blocking connection; e.g. after a Redis Cluster failover): stopping without it",
    );
    return true;
  }
  if (!ended) {
    // Jobs still in flight stay active and come back as stalled; the ledger holds them for review.
    void worker.close(true).catch(() => undefined);
  }
  return ended;
}

/**
 * Tells `onJobEnded` when a job ended for good; BullMQ's events, so the delivery logic stays as it
 * is. (Its records are counted as each ends: onRecordEnded, and parkOrphan's for a failed job.)
 */
function watchJobEnds<P>(
  worker: Worker<QueuedJobData<P>, DeliveryResult>,
  onJobEnded: (batchId: string) => void,
): void {
  worker.on('completed', (job) => onJobEnded(job.data.batchId));
  worker.on('failed', (job, error) => {
    if (job === undefined) return;
    // An UnrecoverableError (stalled too often) ends a job at once; other failures only on its last attempt.
    const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (final) onJobEnded(job.data.batchId);
  });
}

/**
 * The file of a batch, read from Redis once per batch and process (it never changes): an import's
 * jobs name no file, and every job's log lines do.
 */
function cachedBatchFiles(batches: BatchStore): (batchId: string) => Promise<string> {
  const files = new Map<string, Promise<string>>();
  return (batchId) => {
    let file = files.get(batchId);
    if (file === undefined) {
      if (files.size >= 1000) files.clear(); // a worker that runs for months sees many batches
      file = batches.file(batchId);
      files.set(batchId, file);
      file.catch(() => files.delete(batchId)); // Redis unavailable: ask again next time
    }
    return file;
  };
}
