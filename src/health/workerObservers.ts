import type { Config } from '../config.js';
import { ACCOUNTS } from '../kinds/accounts.js';
import { ORDERS } from '../kinds/orders.js';
import { ParkedStore } from '../deadLetter/parkedStore.js';
import type { Logger } from '../logger.js';
import { createMetrics, type BulkorderMetrics, type DeliveryMetricsSink } from '../metrics/bulkorderMetrics.js';
import { createMinuteStats } from '../metrics/minuteStats.js';
import { readState, type StateTarget } from './readState.js';
import { startBatchWatch } from '../notify/batchWatch.js';
import { startBreakerWatch } from '../notify/breakerWatch.js';
import { startBatchCircuitWatch } from '../notify/batchCircuitWatch.js';
import type { BreakerEvent } from '../worker/circuitBreaker.js';
import type { RedisSafety } from '../worker/redisGuard.js';
import type { MetricsApi } from '../metrics/bulkorderMetrics.js';
import { announceRedisSafety } from '../notify/redisNotice.js';
import { createNotifier } from '../notify/notifier.js';
import { openServices, type Services } from '../services.js';
import type { OrderPayload } from '../ingest/types.js';
import type { AccountPayload } from '../ingest/accountColumns.js';
import { opsRoutes } from './opsRoutes.js';
import { foundNoFile, type ScheduledImportResult } from '../schedule/runScheduledImport.js';
import type { Notifier } from '../notify/notifier.js';
import { startHttpServer, type OpsServer } from './startOpsServer.js';
import { defined } from '../errors.js';

/** What a worker process adds to delivery: metrics, notifications, and its HTTP port. */
export interface WorkerObservers {
  /** Pass to startBusinessDelivery / startAccountDelivery: Prometheus counters (with --http-port) and the chart's minutes. */
  readonly metrics: DeliveryMetricsSink;
  onJobEnded?(batchId: string): void;
  onScheduledImport?(result: ScheduledImportResult): void;
  /** Pass to startBusinessDelivery / startAccountDelivery: announces the circuit breaker (with notifications configured). */
  onBreakerEvent?(event: BreakerEvent): Promise<void>;
  /** Pass to startBusinessDelivery / startAccountDelivery: the Redis guard's pauses, for the gauge, `/readyz` and notifications. */
  onRedisSafety(api: MetricsApi, safety: RedisSafety): void;
  /** The ops server's URL, with `--http-port`. */
  readonly url: string | undefined;
  /** Marks the process as shutting down (`/readyz` answers 503 from now on). */
  shuttingDown(): void;
  close(): Promise<void>;
}

/**
 * Sets up what `bulkorder worker` offers besides delivery: with `httpPort`, `/metrics`,
 * `/healthz` and `/readyz` on `host`; with BULKORDER_NOTIFY_* set, announcements of settled
 * batches and (through onBreakerEvent) of the circuit breaker; always, the per-minute outcome counts of the dashboard's chart.
 */
export async function startWorkerObservers(
  config: Config,
  logger: Logger,
  options: {
    httpPort?: number;
    host?: string;
    /** Tests: how often notifications look at batches and the breaker. */ pollMs?: number;
  },
): Promise<WorkerObservers> {
  // Built before the metrics, so its failures are counted once there are any.
  let countFailure: ((destination: string) => void) | undefined;
  const notifier = createNotifier(config.notify, logger, { onFailure: (destination) => countFailure?.(destination) });
  const { orders, accounts } = await openWorkerKinds(config);
  const targets: StateTarget[] = [];
  if (orders !== undefined) targets.push({ api: 'business', services: orders });
  if (accounts !== undefined) targets.push({ api: 'cafetariaplan', services: accounts });
  const first = defined(orders ?? accounts, 'a worker kind (openWorkerKinds opens one at least)');
  const closers: (() => unknown)[] = [() => orders?.close(), () => accounts?.close(), () => notifier.close()];

  // The dashboard's 24-hour chart: every worker adds its minutes, whatever else is configured.
  const stats = createMinuteStats(
    {
      ...(orders === undefined ? {} : { business: orders }),
      ...(accounts === undefined ? {} : { cafetariaplan: accounts }),
    },
    options.pollMs === undefined ? {} : { flushMs: options.pollMs },
  );
  closers.unshift(() => stats.close());

  let stopping = false;
  // What each kind's Redis guard last said (the same Redis, so normally the same).
  const guarded = new Map<MetricsApi, RedisSafety>();
  const metrics = options.httpPort === undefined ? undefined : createMetrics({ snapshot: () => readState(targets) });
  countFailure = metrics === undefined ? undefined : (destination) => metrics.notificationFailed(destination);
  let server: OpsServer | undefined;
  if (metrics !== undefined && options.httpPort !== undefined) {
    const app = opsRoutes({
      redis: first.redis,
      redisUrl: config.redisUrl,
      metrics,
      shuttingDown: () => stopping,
      redisSafety: () => [...guarded.values()].find((safety) => safety.unsafe) ?? { unsafe: false },
    });
    const where = { port: options.httpPort, ...(options.host === undefined ? {} : { host: options.host }) };
    server = await serveOps(app, closers, where);
    closers.unshift(() => server?.close());
    logger.info({ url: server.url }, 'serving /metrics, /healthz and /readyz');
  }

  const { watches, breakerWatches } = notifier.enabled
    ? startNotifyWatches({ config, notifier, logger, kinds: [orders, accounts], pollMs: options.pollMs })
    : { watches: [], breakerWatches: [] };
  for (const watch of [...watches, ...breakerWatches]) closers.unshift(() => watch.close());
  return {
    metrics: bothSinks(metrics, stats),
    // Batch ids are unique across kinds, so each watch just finds nothing for the other kind's batches.
    ...(watches.length === 0 ? {} : { onJobEnded: (batchId: string) => watches.forEach((w) => w.jobEnded(batchId)) }),
    ...(!notifier.enabled
      ? {}
      : { onScheduledImport: (result: ScheduledImportResult) => void announceNoFile(result, config, notifier) }),
    // A transition this process made is looked at now rather than at the next poll; the watch decides what to send.
    ...(breakerWatches.length === 0
      ? {}
      : { onBreakerEvent: async () => void (await Promise.all(breakerWatches.map((w) => w.check()))) }),
    onRedisSafety(api, safety) {
      guarded.set(api, safety);
      metrics?.redisUnsafe(api, safety.unsafe);
      if (!notifier.enabled) return;
      const link = config.dashboard.publicUrl === undefined ? {} : { dashboardUrl: config.dashboard.publicUrl };
      void announceRedisSafety(
        { redis: first.redis, keys: first.keys, notifier, env: config.env, ...link },
        safety,
      ).catch((error: unknown) => logger.warn({ err: error }, 'could not announce what the Redis guard found'));
    },
    url: server?.url,
    shuttingDown() {
      stopping = true;
    },
    async close() {
      for (const close of closers) await close();
    },
  };
}

/** The services of one record kind, as the worker opens them. */
type KindServices = Services<OrderPayload> | Services<AccountPayload>;

/**
 * Each kind's keyspace belongs to its API's target: opens the kinds whose credentials are set (as
 * the worker does): orders unless only Cafetariaplan's are, accounts whenever Cafetariaplan's are.
 */
async function openWorkerKinds(
  config: Config,
): Promise<{ orders: Services<OrderPayload> | undefined; accounts: Services<AccountPayload> | undefined }> {
  const { business, cafetariaplan } = config.credentials;
  const orders = business !== undefined || cafetariaplan === undefined ? await openServices(config, ORDERS) : undefined;
  const accounts =
    cafetariaplan === undefined
      ? undefined
      : await openServices(config, ACCOUNTS).catch(async (error: unknown) => {
          await orders?.close(); // an open connection would keep a process alive that has failed to start
          throw error;
        });
  return { orders, accounts };
}

/** Counts every delivery event in the Prometheus counters (with --http-port) and the dashboard's minutes. */
function bothSinks(
  metrics: BulkorderMetrics | undefined,
  stats: Pick<DeliveryMetricsSink, 'request' | 'order'>,
): DeliveryMetricsSink {
  return {
    request(api, outcome, seconds) {
      metrics?.request(api, outcome, seconds);
      stats.request(api, outcome, seconds);
    },
    order(api, outcome) {
      metrics?.order(api, outcome);
      stats.order(api, outcome);
    },
    tokenRequest(api, result, error) {
      metrics?.tokenRequest(api, result, error);
    },
    workerRecovered(api) {
      metrics?.workerRecovered(api);
    },
  };
}

/**
 * Serves the ops routes on `host` (default 127.0.0.1) and `port`. A port in use ends the process
 * (exit 5): what was opened so far (`closers`) is closed first, so it does not keep it alive (issue 26).
 */
async function serveOps(
  app: Parameters<typeof startHttpServer>[0],
  closers: readonly (() => unknown)[],
  where: { port: number; host?: string },
): Promise<OpsServer> {
  try {
    return await startHttpServer(app, {
      host: where.host ?? '127.0.0.1',
      port: where.port,
      flags: { port: '--http-port', host: '--http-host' },
    });
  } catch (error) {
    for (const close of closers) await close();
    throw error;
  }
}

/** What the notification watches of a worker process announce with, and of which kinds. */
interface NotifyWatchOptions {
  config: Config;
  notifier: Notifier;
  logger: Logger;
  /** The kinds this process delivers (undefined: not configured). */
  kinds: readonly (KindServices | undefined)[];
  /** Tests: how often the watches look at batches and the breakers; each watch's default otherwise. */
  pollMs: number | undefined;
}

/**
 * Per kind, the watches that announce settled batches, batch circuits and the circuit breaker;
 * `watches` are told of job ends, `breakerWatches` of the breaker's transitions.
 */
function startNotifyWatches(options: NotifyWatchOptions): {
  watches: { jobEnded(batchId: string): void; close(): void }[];
  breakerWatches: { check(): Promise<void>; close(): void }[];
} {
  const { notifier, logger, pollMs } = options;
  const watches: { jobEnded(batchId: string): void; close(): void }[] = [];
  const breakerWatches: { check(): Promise<void>; close(): void }[] = [];
  const dashboardUrl = options.config.dashboard.publicUrl;
  const link = dashboardUrl === undefined ? {} : { dashboardUrl };
  for (const services of options.kinds) {
    if (services === undefined) continue;
    const parked = (['dead', 'held'] as const).map(
      (kind) => new ParkedStore(services.redis, services.keys, services.ledger, kind),
    );
    watches.push(
      startBatchWatch({
        redis: services.redis,
        keys: services.keys,
        batches: services.batches,
        parked,
        notifier,
        logger,
        ...link,
        ...(pollMs === undefined ? {} : { sweepMs: pollMs }),
      }),
    );
    breakerWatches.push(
      startBatchCircuitWatch({ services, notifier, logger, ...link, ...(pollMs === undefined ? {} : { pollMs }) }),
      startBreakerWatch({
        services,
        settings: services.delivery.breaker,
        notifier,
        logger,
        ...link,
        ...(pollMs === undefined ? {} : { pollMs }),
      }),
    );
  }
  return { watches, breakerWatches };
}

/** A schedule that fired and found no file is worth telling: the export upstream may have failed. */
async function announceNoFile(result: ScheduledImportResult, config: Config, notifier: Notifier): Promise<void> {
  if (!foundNoFile(result)) return;
  // One firing is one job, run by one worker: its time names it.
  const id = `no-file:${result.schedule}:${Date.now()}`;
  const link = config.dashboard.publicUrl === undefined ? undefined : `${config.dashboard.publicUrl}/schedules`;
  await notifier.notify({
    id,
    event: 'no-file',
    env: config.env,
    text: `Schedule ${result.schedule} fired and found no file: nothing was imported.${link === undefined ? '' : `\n${link}`}`,
    at: new Date().toISOString(),
    schedule: result.schedule,
    ...(link === undefined ? {} : { dashboardUrl: link }),
  });
}
