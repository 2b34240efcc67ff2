import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { keyspace } from '../src/keyspace.js';
import { Ledger } from '../src/ledger/ledger.js';
import type { Logger } from '../src/logger.js';
import { ORDERS_QUEUE, type DeliveryJobData, type ParkedRecord } from '../src/orderJob.js';
import { assertRedisReady, createRedis } from '../src/redis.js';
import { BACKOFF_TYPE, deliveryJobOptions } from '../src/services.js';
import { BatchStore } from '../src/batches/batchStore.js';
import { startReconciler } from '../src/importer/reconcileImports.js';
import type { Outcome as ApiOutcome } from '../src/delivery/classifyOutcome.js';
import { backoffDelay } from '../src/worker/backoff.js';
import { CircuitBreaker } from '../src/worker/circuitBreaker.js';
import { ORDER_WORDING, RetryableDeliveryError, type DeliveryResult, type RecordWording } from '../src/worker/deliverOrder.js';
import type { DeliverySettings } from '../src/worker/deliverySettings.js';
import type { OrderPayload } from '../src/ingest/types.js';
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
  const processor = createDeliverOrderProcessor<P>({
    send: options.send,
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

  // An importer that died (SIGKILL, lost host) left reservations whose jobs it never added: queue them.
  const reconciler = startReconciler({ ledger, batches: new BatchStore(commands, keys, delivery.ledgerRetentionMs), queue, jobOptions: deliveryJobOptions(delivery), logger });
  logger.info({ queue: queueName, concurrency: delivery.concurrency, attempts: delivery.attempts, prefix }, 'delivery worker started');
  let closing: Promise<void> | undefined;
  return {
    worker,
    close() {
      closing ??= (async () => {
        reconciler.stop();
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
