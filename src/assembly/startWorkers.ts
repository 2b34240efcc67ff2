import { hostname } from 'node:os';
import type { Worker } from 'bullmq';
import { bullmq } from '../cjsPackages.js';
import { apiTarget, requireApi, redisPrefix, type Config } from '../config.js';
import { createApiTokenProvider } from '../delivery/apiTokenProvider.js';
import { createHttpTransport } from '../delivery/httpTransport.js';
import { DEFAULT_WEDGE_CHECK, type DeliverySettings } from '../deliverySettings.js';
import type { AccountPayload } from '../ingest/accountColumns.js';
import type { OrderPayload } from '../ingest/types.js';
import { ACCOUNTS } from '../kinds/accounts.js';
import { ORDERS } from '../kinds/orders.js';
import type { RecordKind } from '../kinds/recordKind.js';
import type { DeliveryMetricsSink, MetricsApi } from '../metrics/bulkorderMetrics.js';
import { countRuns, whenIdle } from './idleClose.js';
import { RenewableWorker } from './renewableWorker.js';
import { startWedgeGuard, takeableKeys } from '../worker/wedgeGuard.js';
import type { Logger } from '../logger.js';
import { SCHEDULES_QUEUE } from '../queues.js';
import { createRedis } from '../redis.js';
import type { ScheduledImportResult } from '../schedule/runScheduledImport.js';
import type { ScheduledImportData } from '../schedule/scheduledImportJob.js';
import { openServices } from '../services.js';
import { startDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from './deliveryWorker.js';
import { throttledErrors } from '../worker/throttledErrors.js';
import { startResultsWriter } from '../batches/resultsTrail.js';
import { otherTargetOfSource } from '../watch/folderTarget.js';
import type { BreakerEvent } from '../worker/circuitBreaker.js';
import type { RedisSafety } from '../worker/redisGuard.js';
// The worker assembly is the one place src/ imports jobs/ (README, Design): it hands the processor its effects.
import { createScheduledImportProcessor } from '../../jobs/scheduledImport.js';
import { startTracing } from '../tracing/tracing.js';

/** What a delivery worker process is started with; `prefix` defaults to the target's `bulkorder:<env>:<id>` (redisPrefix(config, api)). */
export interface StartOptions {
  prefix?: string;
  delivery?: DeliverySettings;
  /** The circuit breaker's transitions, once across all workers (notifications hook up here). */
  onBreakerEvent?(event: BreakerEvent): void | Promise<void>;
  /** Metrics of this process (src/metrics), when it serves /metrics. */
  metrics?: DeliveryMetricsSink;
  /** Called when a delivery job of a batch ended for good (notifications). */
  onJobEnded?(batchId: string): void;
  /** Told when a kind's Redis guard pauses or resumes its worker (metrics, `/readyz`, notifications). */
  onRedisSafety?(api: MetricsApi, safety: RedisSafety): void;
  /** Told what each scheduled import firing did (notifications: a schedule that found no file). */
  onScheduledImport?(result: ScheduledImportResult): void;
  /**
   * Fetch the API token (or take the shared one) as soon as the worker runs, instead of at its first
   * job, so the first orders of an import wait for nothing: `bulkorder worker` and the demo. Default
   * false. A failure is only logged (debug): the first job asks again and reports it as always.
   */
  prefetchToken?: boolean;
  /** DeliveryWorkerOptions.adoptRedisClock: this process's Date.now() on Redis's clock (a worker process). Default false. */
  adoptRedisClock?: boolean;
}

/** The optional observers of StartOptions, as startDeliveryWorker takes them. */
function observers(
  options: StartOptions,
  api: MetricsApi,
): Pick<DeliveryWorkerOptions<unknown>, 'metrics' | 'onJobEnded' | 'onBreakerEvent' | 'onRedisSafety'> {
  const onRedisSafety = options.onRedisSafety;
  return {
    ...(onRedisSafety === undefined ? {} : { onRedisSafety: (safety: RedisSafety) => onRedisSafety(api, safety) }),
    ...(options.metrics === undefined ? {} : { metrics: { sink: options.metrics, api } }),
    ...(options.onJobEnded === undefined ? {} : { onJobEnded: options.onJobEnded }),
    ...(options.onBreakerEvent === undefined ? {} : { onBreakerEvent: options.onBreakerEvent }),
  };
}

/** Counts token requests when metrics are on. */
function tokenObserver(
  options: StartOptions,
  api: MetricsApi,
): { onTokenRequest?(result: 'ok' | 'failed', error?: unknown): void } {
  const metrics = options.metrics;
  return metrics === undefined ? {} : { onTokenRequest: (result, error) => metrics.tokenRequest(api, result, error) };
}

/**
 * Everything a delivery worker of one record kind needs, built from the configuration: the shared
 * token (Redis, under the kind's target prefix: one per token URL, client id and secret), the
 * kind's API client (RecordKind.connect) and the BullMQ worker.
 */
async function startKindDelivery<P>(
  config: Config,
  kind: RecordKind<P>,
  logger: Logger,
  options: StartOptions,
): Promise<DeliveryWorker<P>> {
  const prefix = options.prefix ?? redisPrefix(config, kind.api);
  const delivery = options.delivery ?? config.delivery;
  const settings = requireApi(config, kind.api);
  // Not auto-pipelined (ioredis enableAutoPipelining): on the delivery bench (2026-11-29) Redis's CPU per order fell
  // 3-11% at concurrency 200, the worker's rose up to 15% at 50 (each tick's pipeline copies every defined script).
  const redis = createRedis(config, 'worker');
  const transport = createHttpTransport({ ...settings.http, connectionsPerOrigin: delivery.concurrency });
  const tokenProvider = createApiTokenProvider(settings, {
    transport,
    logger,
    redis,
    keyPrefix: prefix,
    ...tokenObserver(options, kind.api),
  });
  const client = kind.connect(settings, { transport, tokenProvider, logger });
  const tracing = await startTracing(config.tracing);
  const worker = await startDeliveryWorker<P>({
    endpoint: config,
    kind,
    prefix,
    delivery,
    send: (payload, record) => client.send(payload, record),
    requestDeadlineMs: settings.http.deadlineMs,
    logger: kind.api === 'business' ? logger : logger.child({ api: kind.api }),
    redis,
    ...(tracing === undefined ? {} : { tracing }),
    ...observers(options, kind.api),
    ...(options.adoptRedisClock === undefined ? {} : { adoptRedisClock: options.adoptRedisClock }),
  }).catch(async (error: unknown) => {
    // Refused (Redis unfit, a newer bulkorder's data): nothing of ours may keep the process alive.
    await transport.close();
    redis.disconnect();
    throw error;
  });
  if (options.prefetchToken === true)
    tokenProvider.getToken().catch((error: unknown) => logger.debug({ err: error }, 'no token at start'));
  let closing: Promise<void> | undefined;
  return {
    get worker() {
      return worker.worker;
    },
    // Once, however often it is asked (a signal handler, then the caller's own end): undici's agent closes once.
    close() {
      closing ??= (async () => {
        await worker.close();
        await transport.close();
        redis.disconnect();
      })();
      return closing;
    },
  };
}

/**
 * The Business API's order delivery worker, plus the scheduled-import worker (every worker
 * process runs scheduled imports; BullMQ gives each firing to one). Used by `bulkorder worker`,
 * `watch --deliver` and the demo.
 */
export async function startBusinessDelivery(
  config: Config,
  logger: Logger,
  options: StartOptions = {},
): Promise<DeliveryWorker<OrderPayload>> {
  const delivery = await startKindDelivery(config, ORDERS, logger, options);
  const prefix = options.prefix ?? redisPrefix(config);
  const scheduled = await startScheduledImportWorker(config, logger, {
    prefix,
    ...(options.delivery === undefined ? {} : { delivery: options.delivery }),
    ...(options.onScheduledImport === undefined ? {} : { onScheduledImport: options.onScheduledImport }),
  });
  return {
    get worker() {
      return delivery.worker;
    },
    async close() {
      await scheduled.close();
      await delivery.close();
    },
  };
}

/**
 * The account-registration worker: the same BullMQ worker, ledger, retries, dead letters,
 * held records and circuit breaker as order delivery, over the accounts kind's queue and
 * keyspace, calling the Cafetariaplan API with its own credentials and shared token.
 * Started by `bulkorder worker` when Cafetariaplan credentials are configured.
 */
export function startAccountDelivery(
  config: Config,
  logger: Logger,
  options: StartOptions = {},
): Promise<DeliveryWorker<AccountPayload>> {
  return startKindDelivery(config, ACCOUNTS, logger, options);
}

export interface ScheduledImportWorker {
  /** The BullMQ worker now: the wedge guard may replace it. */
  readonly worker: Worker<ScheduledImportData, ScheduledImportResult>;
  /** Lets an import in progress finish, then closes. */
  close(): Promise<void>;
}

/**
 * The BullMQ worker of the `schedules` queue: runs in every `bulkorder worker` process beside the
 * delivery worker, one import at a time per process. BullMQ hands each firing to one of them. Its
 * blocking wait has the delivery worker's wedge guard: a firing left waiting for a worker whose wait
 * went deaf (a Redis Cluster failover) gets a new BullMQ worker.
 */
async function startScheduledImportWorker(
  config: Config,
  logger: Logger,
  options: StartOptions = {},
): Promise<ScheduledImportWorker> {
  const prefix = options.prefix ?? redisPrefix(config);
  const services = await openServices(config, ORDERS, {
    prefix,
    role: 'worker',
    ...(options.delivery === undefined ? {} : { delivery: options.delivery }),
  });
  // Looked at every firing: a drop folder claimed by another target since `schedule set` is refused too.
  const running = countRuns(
    createScheduledImportProcessor(services.pipeline(logger), (source) =>
      otherTargetOfSource(source, apiTarget(config, ORDERS.api)),
    ),
  );
  const onError = throttledErrors(logger, 'scheduled-import worker error (Redis?); BullMQ reconnects on its own');
  const bull = new RenewableWorker<ScheduledImportData, ScheduledImportResult>({
    connect: () => createRedis(config, 'worker'),
    create: (connection, autorun) =>
      new (bullmq().Worker)<ScheduledImportData, ScheduledImportResult>(SCHEDULES_QUEUE, running.processor, {
        connection,
        prefix,
        concurrency: 1,
        autorun,
        // getWorkers() shows this name: which host and process.
        name: `${hostname()}:${process.pid}:schedules`,
      }),
    wire(worker) {
      worker.on('error', onError);
      if (options.onScheduledImport !== undefined)
        worker.on('completed', (_job, result) => options.onScheduledImport?.(result));
      worker.on('failed', (job, error) =>
        logger.error({ schedule: job?.data.schedule, err: error }, 'scheduled import failed'),
      );
    },
  });
  let closing: Promise<void> | undefined;
  const keys = new (bullmq().QueueKeys)(prefix);
  const wedge = startWedgeGuard({
    ...((options.delivery ?? config.delivery).wedgeCheck ?? DEFAULT_WEDGE_CHECK),
    redis: services.redis,
    // No limiter on this queue.
    keys: takeableKeys((type) => keys.toKey(SCHEDULES_QUEUE, type), Number.POSITIVE_INFINITY),
    jobs: () => ({ started: running.started(), running: running.count() }),
    held: () => closing !== undefined || bull.worker.isPaused(),
    recover: () => bull.renew(),
    logger: logger.child({ queue: SCHEDULES_QUEUE }),
  });
  // Scheduled imports (and dashboard uploads whose input this host holds) get their results file once settled.
  const results = startResultsWriter({ ...services, csvOutput: services.files.csv, logger });
  return {
    get worker() {
      return bull.worker;
    },
    close() {
      closing ??= (async () => {
        wedge.stop();
        await results.stop();
        // An import in progress finishes; then BullMQ's close gets IDLE_CLOSE_MS (src/assembly/idleClose.ts).
        const idle = whenIdle(running.count, Promise.resolve());
        const ended = await Promise.race([bull.worker.close().then(() => 'closed' as const), idle.idle]);
        idle.stop();
        if (ended === 'idle')
          logger.warn("BullMQ's scheduled-import worker did not close after its last import: stopping without it");
        bull.connection.disconnect();
        await services.close();
      })();
      return closing;
    },
  };
}
