import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { hostname } from 'node:os';
import { keyspace } from '../src/keyspace.js';
import { Ledger } from '../src/ledger/ledger.js';
import type { Logger } from '../src/logger.js';
import { ORDERS_QUEUE, type DeliveryJobData, type ParkedRecord } from '../src/orderJob.js';
import { assertRedisReady, createRedis } from '../src/redis.js';
import { BACKOFF_TYPE } from '../src/services.js';
import type { Outcome as ApiOutcome } from '../src/delivery/classifyOutcome.js';
import { backoffDelay } from '../src/worker/backoff.js';
import { CircuitBreaker } from '../src/worker/circuitBreaker.js';
import { ORDER_WORDING, RetryableDeliveryError, type DeliveryResult, type RecordWording } from '../src/worker/deliverOrder.js';
import type { DeliverySettings } from '../src/worker/deliverySettings.js';
import type { OrderPayload } from '../src/ingest/types.js';
import type { DeliveryMetricsSink, MetricsApi } from '../src/metrics/bulkorderMetrics.js';
import type { ScheduledImportResult } from '../src/schedule/runScheduledImport.js';
import { observeDelivery } from '../src/metrics/observeDelivery.js';
import { createDeliverOrderProcessor } from './deliverOrder.js';

/** Jobs per second that stand for "no limit" (see the limiter below). */
const UNLIMITED_PER_SECOND = 1_000_000_000;

export interface DeliveryWorkerOptions<P> {
  redisUrl: string;
  /**
   * Key prefix of the ledger, batches, dead letters, breaker and the BullMQ queue: `bulkorder:<env>`
   * for orders, `bulkorder:<env>:accounts` for employee accounts (their own keyspace).
   */
  prefix: string;
  /** BullMQ queue name; default `orders`. */
  queueName?: string;
  delivery: DeliverySettings;
  /** The API call that creates one record (src/delivery); returns a classified outcome, never throws for HTTP failures. */
  send(payload: P): Promise<ApiOutcome>;
  /** How reasons and logs name the record; default orders. */
  wording?: RecordWording;
  /** The HTTP deadline of one call: the job lock must outlast it. */
  requestDeadlineMs: number;
  logger: Logger;
  /** A Redis connection for the shared token cache and the ledger; made here when not given. */
  redis?: Redis;
  /** Counts requests and outcomes (src/metrics); `api` labels them. */
  metrics?: { sink: DeliveryMetricsSink; api: MetricsApi };
  /** Called when a job of a batch ended for good (notifications check whether the batch settled). */
  onJobEnded?(batchId: string): void;
}

/** What `bulkorder worker` passes to startBusinessDelivery / startAccountDelivery. */
export interface DeliveryStartOptions {
  prefix: string;
  delivery: DeliverySettings;
  /** Metrics of this process (src/metrics), when it serves /metrics. */
  metrics?: DeliveryMetricsSink;
  /** See DeliveryWorkerOptions.onJobEnded. */
  onJobEnded?(batchId: string): void;
  /** Told what each scheduled import firing did. */
  onScheduledImport?(result: ScheduledImportResult): void;
}

/** The optional observers of DeliveryStartOptions, as DeliveryWorkerOptions takes them. */
export function observers(options: DeliveryStartOptions, api: MetricsApi): Pick<DeliveryWorkerOptions<unknown>, 'metrics' | 'onJobEnded'> {
  return {
    ...(options.metrics === undefined ? {} : { metrics: { sink: options.metrics, api } }),
    ...(options.onJobEnded === undefined ? {} : { onJobEnded: options.onJobEnded }),
  };
}

/** Counts token requests when metrics are on. */
export function tokenObserver(options: DeliveryStartOptions, api: MetricsApi): { onTokenRequest?(result: 'ok' | 'failed', error?: unknown): void } {
  const metrics = options.metrics;
  return metrics === undefined ? {} : { onTokenRequest: (result, error) => metrics.tokenRequest(api, result, error) };
}

export interface DeliveryWorker<P = OrderPayload> {
  readonly worker: Worker<DeliveryJobData<P>, DeliveryResult>;
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
  const { delivery, logger, prefix } = options;
  const queueName = options.queueName ?? ORDERS_QUEUE;
  const wording = options.wording ?? ORDER_WORDING;
  const commands = options.redis ?? createRedis(options.redisUrl, 'worker');
  const blocking = createRedis(options.redisUrl, 'worker');
  await assertRedisReady(commands, options.redisUrl);
  const keys = keyspace(prefix);
  const ledger = new Ledger(commands, keys, { queueName, retentionMs: delivery.ledgerRetentionMs, ambiguousPolicy: delivery.ambiguousPolicy });
  const queue = new Queue<DeliveryJobData<P>>(queueName, { connection: commands, prefix });
  const breaker = new CircuitBreaker(commands, keys, () => queue.pause(), logger, { threshold: delivery.breakerThreshold });

  // The processor needs the worker (for its rate limiter) and the worker needs the processor.
  let worker: Worker<DeliveryJobData<P>, DeliveryResult> | undefined;
  const send = options.metrics === undefined ? options.send : observeDelivery(options.send, options.metrics.sink, options.metrics.api);
  const processor = createDeliverOrderProcessor<P>({
    send,
    wording,
    ledger,
    breaker,
    logger,
    // Several 429s may arrive together: a shorter Retry-After must not cut a longer pause short.
    rateLimit: async (ms) => {
      if (ms > (await queue.getRateLimitTtl(UNLIMITED_PER_SECOND))) await worker?.rateLimit(ms);
    },
  });
  worker = new Worker<DeliveryJobData<P>, DeliveryResult>(queueName, processor, {
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
    // Always a limiter: BullMQ honours a manual rateLimit() (our answer to a 429) only for
    // workers that have one, so "no limit" is a limit too high to reach.
    limiter: { max: delivery.maxRequestsPerSecond > 0 ? delivery.maxRequestsPerSecond : UNLIMITED_PER_SECOND, duration: 1000 },
    settings: {
      backoffStrategy: (attemptsMade, type, error) =>
        type === BACKOFF_TYPE ? backoffDelay(attemptsMade, delivery.backoff, error instanceof RetryableDeliveryError ? error.retryAfterMs : undefined) : 0,
    },
  });
  worker.on('error', (error) => logger.error({ err: error }, 'worker error (Redis?); BullMQ reconnects on its own'));
  worker.on('failed', (job, error) => {
    if (job !== undefined) void parkOrphan(job, error, ledger, logger, wording.noun);
  });
  if (options.metrics !== undefined || options.onJobEnded !== undefined) watchJobEnds(worker, options.metrics, options.onJobEnded);

  logger.info({ queue: queueName, concurrency: delivery.concurrency, attempts: delivery.attempts, prefix }, 'delivery worker started');
  let closing: Promise<void> | undefined;
  return {
    worker,
    close() {
      closing ??= (async () => {
        const graceful = worker.close();
        const timedOut = await Promise.race([
          graceful.then(() => false),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(true), delivery.shutdownGraceMs).unref()),
        ]);
        if (timedOut) {
          // Jobs still in flight stay active and come back as stalled; the ledger holds them for review.
          logger.warn({ graceMs: delivery.shutdownGraceMs }, 'requests still in flight at the end of the grace period; closing anyway');
          await worker.close(true);
        }
        await queue.close().catch(() => undefined);
        blocking.disconnect();
        if (options.redis === undefined) commands.disconnect();
        logger.info({ queue: queueName }, 'delivery worker stopped');
      })();
      return closing;
    },
  };
}

/** Counts how jobs ended and tells `onJobEnded`; BullMQ's events, so the delivery logic stays as it is. */
function watchJobEnds<P>(worker: Worker<DeliveryJobData<P>, DeliveryResult>, metrics: DeliveryWorkerOptions<P>['metrics'], onJobEnded: ((batchId: string) => void) | undefined): void {
  worker.on('completed', (job, result) => {
    metrics?.sink.order(metrics.api, result.outcome === 'already-delivered' ? 'already_delivered' : result.outcome);
    onJobEnded?.(job.data.batchId);
  });
  worker.on('failed', (job, error) => {
    if (job === undefined) return;
    // UnrecoverableError: the processor dead-lettered it; other failures end the job only on its last attempt.
    const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final) return;
    metrics?.sink.order(metrics.api, 'dead_lettered');
    onJobEnded?.(job.data.batchId);
  });
}

/** Parks a job that failed for good without our processor having parked it. */
async function parkOrphan<P>(job: Job<DeliveryJobData<P>>, error: Error, ledger: Ledger, logger: Logger, noun: string): Promise<void> {
  if (error.name === 'UnrecoverableError') return; // the processor parked it before throwing
  const finalAttempt = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled/i.test(error.message);
  if (!finalAttempt) return;
  const data = job.data;
  try {
    const entry = await ledger.get(data.key);
    const token = entry === undefined ? undefined : await ledger.currentToken(data.key);
    const kind: 'dead' | 'held' = entry?.state === 'sending' ? 'held' : 'dead';
    if (entry === undefined || (entry.state !== 'sending' && entry.state !== 'queued')) return;
    const record: ParkedRecord<P> = {
      kind,
      orderKey: data.key,
      batchId: data.batchId,
      file: data.file,
      lines: data.lines,
      ...(data.orderRef === undefined ? {} : { orderRef: data.orderRef }),
      payload: data.payload,
      cells: data.cells,
      reason:
        kind === 'held'
          ? `The job failed while the ${noun} was being sent (${error.message}); it may or may not have reached the API.`
          : `The job failed before the ${noun} could be delivered: ${error.message}`,
      code: kind === 'held' ? 'OUTCOME_UNKNOWN' : 'JOB_FAILED',
      message: error.message,
      attempts: job.attemptsMade,
      parkedAt: Date.now(),
    };
    // A queued entry has no claim token; claim it first so the park is atomic.
    const parkToken = token ?? `orphan-${job.id}`;
    if (entry.state === 'queued') await ledger.claim(data.key, parkToken);
    await ledger.settle({ orderKey: data.key, batchId: data.batchId, token: parkToken, state: kind, parkedRecord: record, code: record.code!, message: error.message });
    logger.warn({ batchId: data.batchId, orderKey: data.key, kind, err: error }, 'job failed outside the delivery logic; parked');
  } catch (parkError) {
    logger.error({ batchId: data.batchId, orderKey: data.key, err: parkError }, 'could not park a failed job; the import will find it queued without a job and take it over');
  }
}
