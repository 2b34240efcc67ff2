import type { Worker } from 'bullmq';
import { bullmq } from '../cjsPackages.js';
import { hostname } from 'node:os';
import { keyspace } from '../keyspace.js';
import { Ledger } from '../ledger/ledger.js';
import { ensureNamespaceMarker } from '../ledger/namespaceMarker.js';
import { bulkorderVersion } from '../paths.js';
import type { Logger } from '../logger.js';
import { isChunk, type AnyDeliveryJobData } from '../deliveryJob.js';
import { assertRedisReady, createRedis, type RedisClient, type RedisEndpoint } from '../redis.js';
import { BACKOFF_TYPE, deliveryJobOptions } from '../queues.js';
import { BatchStore } from '../batches/batchStore.js';
import { startReconciler } from '../importer/reconcileImports.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import { shutdownBudget, type DeliverySettings } from '../deliverySettings.js';
import type { RecordKind } from '../kinds/recordKind.js';
import { backoffDelay } from '../worker/backoff.js';
import { CircuitBreaker, type BreakerEvent } from '../worker/circuitBreaker.js';
import { requeueBurst } from '../worker/requeueBurst.js';
import { throttledErrors } from '../worker/throttledErrors.js';
import { startPresence } from '../worker/workerPresence.js';
import { RetryableDeliveryError, type DeliveryResult } from '../worker/deliverRecord.js';
import { parkOrphan } from '../worker/parkOrphan.js';
import { startRedisGuard, type RedisSafety } from '../worker/redisGuard.js';
import { RequestSlots } from '../worker/requestSlots.js';
import { SharedRate } from '../worker/sharedRate.js';
import type { DeliveryMetricsSink, MetricsApi, OrderOutcome } from '../metrics/bulkorderMetrics.js';
import { observeDelivery } from '../metrics/observeDelivery.js';
// The worker assembly is the one place src/ imports jobs/ (README, Design): it hands the processor its effects.
import { createDeliveryProcessor } from '../../jobs/deliveryProcessor.js';

/** Jobs per second that stand for "no limit" (see the limiter below). */
const UNLIMITED_PER_SECOND = 1_000_000_000;

export interface DeliveryWorkerOptions<P> {
  /** Where Redis is (one server or a cluster; src/config.ts). */
  endpoint: RedisEndpoint;
  /** The record kind: its queue, keyspace, retention and wording. */
  kind: RecordKind<P>;
  /** The target's key prefix, `bulkorder:<env>:<id>` (redisPrefix(config, kind.api)); the kind's keyspace is under it. */
  prefix: string;
  delivery: DeliverySettings;
  /** The API call that creates one record (src/delivery); returns a classified outcome, never throws for HTTP failures. */
  send(payload: P, record: { key: string }): Promise<ApiOutcome>;
  /** The HTTP deadline of one call: the job lock must outlast it. */
  requestDeadlineMs: number;
  logger: Logger;
  /** A Redis connection for the shared token cache and the ledger; made here when not given. */
  redis?: RedisClient;
  /** Breaker transitions (opened, reopened, halfOpen, closed, stuck), once across all workers: the notification hook. */
  onBreakerEvent?(event: BreakerEvent): void | Promise<void>;
  /** Counts requests and outcomes (src/metrics); `api` labels them. */
  metrics?: { sink: DeliveryMetricsSink; api: MetricsApi };
  /** Called when a job of a batch ended for good (notifications check whether the batch settled). */
  onJobEnded?(batchId: string): void;
  /** Told when the Redis guard pauses or resumes this worker (metrics, `/readyz`, notifications). */
  onRedisSafety?(safety: RedisSafety): void;
}

export interface DeliveryWorker<P> {
  readonly worker: Worker<AnyDeliveryJobData<P>, DeliveryResult>;
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
  const { delivery, logger, kind } = options;
  const prefix = kind.prefix(options.prefix);
  const queueName = kind.queueName;
  const wording = kind.wording;
  const commands = options.redis ?? createRedis(options.endpoint, 'worker');
  const blocking = createRedis(options.endpoint, 'worker');
  const keys = keyspace(prefix);
  try {
    await assertRedisReady(commands, options.endpoint.redisUrl, {
      requirePersistence: delivery.requirePersistentRedis,
    });
    // A worker of an older bulkorder must not take jobs of a newer one's namespace (README "Deployment").
    await ensureNamespaceMarker(commands, keys, { processVersion: bulkorderVersion() });
  } catch (error) {
    blocking.disconnect();
    if (options.redis === undefined) commands.disconnect();
    throw error;
  }
  const ledger = new Ledger(commands, keys, {
    queueName,
    retentionMs: kind.retentionMs(delivery),
    parkedRetentionMs: delivery.parkedRetentionMs,
    ambiguousPolicy: delivery.ambiguousPolicy,
  });
  const batches = new BatchStore(commands, keys, kind.retentionMs(delivery));
  const batchFile = cachedBatchFiles(batches);
  const queue = new bullmq.Queue<AnyDeliveryJobData<P>>(queueName, { connection: commands, prefix });
  const breaker = new CircuitBreaker(commands, keys, logger, {
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
  const logRedisError = throttledErrors(logger, 'Redis unavailable to the worker; BullMQ reconnects on its own');
  const ticker = setInterval(() => void breaker.tick().catch(logRedisError), 1000);
  ticker.unref();
  const presence = startPresence(commands, keys, { queue: queueName, concurrency: delivery.concurrency });

  const send =
    options.metrics === undefined
      ? options.send
      : observeDelivery(options.send, options.metrics.sink, options.metrics.api);
  // Requests in flight in this process, shared by jobs of one record and chunk jobs alike.
  const slots = new RequestSlots(delivery.concurrency);
  // After a 429 every worker process paces its requests from one rate in Redis.
  const rate = new SharedRate(commands, keys, {
    settings: delivery.rate,
    ceilingPerSecond: delivery.maxRequestsPerSecond,
  });
  await rate.start();
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
    send,
    slots,
    isClosing: () => stopping,
    ...(kind.payloadCodec === undefined ? {} : { codec: kind.payloadCodec }),
    ...(options.metrics === undefined
      ? {}
      : { onRecordEnded: (outcome: OrderOutcome) => options.metrics!.sink.order(options.metrics!.api, outcome) }),
    wording,
    customerOf: (payload: P) => kind.customerOf(payload),
    ledger,
    breaker,
    batchFile,
    logger,
    rate,
  });
  const worker = new bullmq.Worker<AnyDeliveryJobData<P>, DeliveryResult>(queueName, processor, {
    connection: blocking,
    prefix,
    // getWorkers() shows this name: which host and process, at what concurrency.
    name: `${hostname()}:${process.pid}:${delivery.concurrency}`,
    concurrency: delivery.concurrency,
    // The lock is renewed every half lockDuration while a job runs; it also outlasts one request,
    // so even a missed renewal cannot hand a job in flight to a second worker.
    lockDuration: options.requestDeadlineMs + 5_000,
    stalledInterval: delivery.stalledIntervalMs,
    maxStalledCount: 2,
    // Always a limiter: BullMQ honours a manual rateLimit() only for workers that have one, so
    // "no limit" is a limit too high to reach.
    limiter: {
      max: delivery.maxRequestsPerSecond > 0 ? delivery.maxRequestsPerSecond : UNLIMITED_PER_SECOND,
      duration: 1000,
    },
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
  worker.on('error', logRedisError);
  // Without a listener BullMQ prints every connection error raw to stderr.
  queue.on('error', logRedisError);
  worker.on('failed', (job, error) => {
    if (job !== undefined) void parkOrphan(job, error, ledger, logger, wording.noun, batchFile, kind.payloadCodec);
  });
  if (options.metrics !== undefined || options.onJobEnded !== undefined)
    watchJobEnds(worker, options.metrics, options.onJobEnded);

  // A Redis that starts evicting (or forgets, in production) while we run: take no jobs until it is fixed.
  const guard = startRedisGuard({
    redis: commands,
    checkMs: delivery.redisCheck.everyMs,
    requirePersistence: delivery.requirePersistentRedis,
    unverifiable: delivery.redisCheck.unverifiable,
    pause: () => worker.pause(true),
    resume: () => void worker.resume(),
    logger,
    ...(options.onRedisSafety === undefined ? {} : { onChange: options.onRedisSafety }),
  });
  // An importer that died (SIGKILL, lost host) left reservations whose jobs it never added: queue them.
  const reconciler = startReconciler({ ledger, batches, queue, jobOptions: deliveryJobOptions(delivery), logger });
  logger.info(
    { queue: queueName, concurrency: delivery.concurrency, attempts: delivery.attempts, prefix },
    'delivery worker started',
  );
  let closing: Promise<void> | undefined;
  return {
    worker,
    close() {
      closing ??= (async () => {
        stopping = true;
        guard.stop();
        reconciler.stop();
        clearInterval(ticker);
        rate.stop();
        // Everything below may hang on a Redis that is down: the grace period bounds the whole of it.
        const stopped = (async () => {
          await presence.stop();
          await worker.close();
          return true;
        })().catch(() => false);
        const inTime = await Promise.race([
          stopped,
          new Promise<false>((resolve) =>
            setTimeout(() => resolve(false), shutdownBudget(delivery.shutdownGraceMs).inFlightMs).unref(),
          ),
        ]);
        if (!inTime) {
          // Jobs still in flight stay active and come back as stalled; the ledger holds them for review.
          void worker.close(true).catch(() => undefined);
        }
        // Settles Redis still refuses (full) get their last resort, above maxmemory, before we disconnect.
        ended.abort();
        await Promise.race([
          Promise.allSettled([...waitingSettles]),
          new Promise((resolve) => setTimeout(resolve, 2000).unref()),
        ]);
        await Promise.race([
          queue.close().catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, 1000).unref()),
        ]);
        blocking.disconnect();
        if (options.redis === undefined) commands.disconnect();
        if (inTime) logger.info({ queue: queueName }, 'delivery worker stopped');
        else
          logger.warn(
            { queue: queueName, graceMs: delivery.shutdownGraceMs, redis: commands.status },
            'delivery worker stopped at the end of the grace period (requests in flight or Redis unreachable); unfinished jobs come back as stalled',
          );
      })();
      return closing;
    },
  };
}

/** Counts how jobs ended and tells `onJobEnded`; BullMQ's events, so the delivery logic stays as it is. */
function watchJobEnds<P>(
  worker: Worker<AnyDeliveryJobData<P>, DeliveryResult>,
  metrics: DeliveryWorkerOptions<P>['metrics'],
  onJobEnded: ((batchId: string) => void) | undefined,
): void {
  worker.on('completed', (job, result) => {
    // A chunk job's records are counted as each ends (onRecordEnded), retried attempts included.
    if (result.outcome !== 'chunk')
      metrics?.sink.order(metrics.api, result.outcome === 'already-delivered' ? 'already_delivered' : result.outcome);
    onJobEnded?.(job.data.batchId);
  });
  worker.on('failed', (job, error) => {
    if (job === undefined) return;
    // UnrecoverableError: the processor dead-lettered it; other failures end the job only on its last attempt.
    const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final) return;
    if (!isChunk(job.data)) metrics?.sink.order(metrics.api, 'dead_lettered');
    onJobEnded?.(job.data.batchId);
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
