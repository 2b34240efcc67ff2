import { shutdownBudget, type DeliverySettings } from '../deliverySettings.js';
import { redisPrefix, requireApi } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import { startAccountDelivery, startBusinessDelivery } from '../assembly/startWorkers.js';
import {
  reportStarted,
  runWorkerProcesses,
  stopWhenOrphaned,
  workerProcessCount,
} from '../assembly/workerProcesses.js';
import type { CommandContext, ConfigFlags } from './options.js';
import { startWorkerObservers, type WorkerObservers } from '../health/workerObservers.js';

/** Flags of `bulkorder worker`. */
export interface WorkerFlags extends ConfigFlags {
  concurrency?: string;
  processes?: string;
  httpPort?: string;
  httpHost?: string;
}

/** `bulkorder worker`: runs until SIGTERM or SIGINT; returns the exit code. */
export async function runWorker(flags: WorkerFlags, ctx: CommandContext): Promise<number> {
  const concurrency = concurrencyOf(flags, ctx);
  const httpPort = httpPortOf(flags);
  // Configuration first (exit 2 names the variable), before the observers open Redis.
  const { business: hasBusiness, cafetariaplan: hasCafetariaplan } = ctx.config.credentials;
  if (hasBusiness !== undefined || hasCafetariaplan === undefined) requireApi(ctx.config, 'business');
  if (hasCafetariaplan !== undefined) requireApi(ctx.config, 'cafetariaplan');
  const delivery = { ...ctx.config.delivery, concurrency };
  const processes = workerProcessCount(flags.processes ?? ctx.config.workerProcesses);
  if (processes > 1) return superviseProcesses(processes, httpPort, ctx);
  const started: Started = { running: [] };
  let stopAt: number;
  // Listening from the start: a signal while starting (Redis down, waiting) must end the process too.
  const signalled = new Promise<string>((resolve) => {
    ctx.stop.graceful(resolve, ctx.config.delivery.shutdownGraceMs);
    stopWhenOrphaned(() => resolve('parent process gone'));
  });
  const starting = startDeliveries(ctx, started, {
    delivery,
    ...(httpPort === undefined ? {} : { httpPort }),
    ...(flags.httpHost === undefined ? {} : { host: flags.httpHost }),
  });
  try {
    const early = await Promise.race([starting.then(() => undefined), signalled]);
    if (early !== undefined) {
      starting.catch(() => undefined);
      ctx.logger.info({ signal: early }, 'stopping while starting: no job was taken');
      // A half-started worker (waiting for Redis) has connections nothing can close yet.
      exitSoon(ExitCode.ok);
      return ExitCode.ok;
    } else {
      reportStarted();
      const signal = await signalled;
      stopAt = Date.now();
      ctx.logger.info({ signal }, 'stopping: no new jobs; finishing requests in flight');
      started.observers?.shuttingDown();
    }
  } catch (error) {
    await Promise.all(started.running.map((worker) => worker.close()));
    await started.observers?.close();
    throw error;
  }
  return closeWithinGrace(started, stopAt, ctx);
}

/** --concurrency (or BULKORDER_CONCURRENCY): requests in flight per process, 1 to 1000. */
function concurrencyOf(flags: WorkerFlags, ctx: CommandContext): number {
  const concurrency = flags.concurrency === undefined ? ctx.config.delivery.concurrency : Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new UsageError('USAGE', `--concurrency must be a whole number from 1 to 1000, not '${flags.concurrency}'`);
  }
  return concurrency;
}

/** --http-port, 0 to 65535; undefined without it (no ops server). */
function httpPortOf(flags: WorkerFlags): number | undefined {
  const httpPort = flags.httpPort === undefined ? undefined : Number(flags.httpPort);
  if (httpPort !== undefined && !(Number.isInteger(httpPort) && httpPort >= 0 && httpPort <= 65535)) {
    throw new UsageError('USAGE', `--http-port must be a port number from 0 to 65535, not '${flags.httpPort}'`);
  }
  return httpPort;
}

/**
 * A supervisor: N children run this same command with --processes 1 (the last flag wins), and
 * child i serves --http-port + i, so each process's metrics and health can be scraped.
 */
function superviseProcesses(processes: number, httpPort: number | undefined, ctx: CommandContext): Promise<number> {
  const [script] = process.argv.slice(1);
  if (script === undefined) throw new UsageError('USAGE', '--processes needs the CLI script to fork');
  const argsFor = (slot: number): string[] => [
    ...process.argv.slice(2),
    '--processes',
    '1',
    ...(httpPort === undefined || httpPort === 0 ? [] : ['--http-port', String(httpPort + slot)]),
  ];
  return runWorkerProcesses({
    count: processes,
    script,
    argsFor,
    graceMs: ctx.config.delivery.shutdownGraceMs,
    logger: ctx.logger,
    stop: ctx.stop,
  });
}

/** What has started so far, filled in as each part starts: a stop or a failure closes what is here. */
interface Started {
  observers?: WorkerObservers;
  running: { close(): Promise<void> }[];
}

/** How this process delivers: its delivery settings and, with --http-port, where the ops server listens. */
interface DeliveryStart {
  delivery: DeliverySettings;
  httpPort?: number;
  host?: string;
}

/**
 * Starts the observers (metrics, notifications, the ops server), then a delivery worker per
 * configured API, each told to the observers; records each in `started` as it starts.
 */
async function startDeliveries(ctx: CommandContext, started: Started, start: DeliveryStart): Promise<void> {
  const { business, cafetariaplan } = ctx.config.credentials;
  const { delivery } = start;
  const observers = await startWorkerObservers(ctx.config, ctx.logger, {
    ...(start.httpPort === undefined ? {} : { httpPort: start.httpPort }),
    ...(start.host === undefined ? {} : { host: start.host }),
  });
  started.observers = observers;
  const observed = {
    metrics: observers.metrics,
    onRedisSafety: observers.onRedisSafety,
    ...(observers.onJobEnded === undefined ? {} : { onJobEnded: observers.onJobEnded }),
    ...(observers.onScheduledImport === undefined ? {} : { onScheduledImport: observers.onScheduledImport }),
    ...(observers.onBreakerEvent === undefined ? {} : { onBreakerEvent: observers.onBreakerEvent }),
  };
  // Orders unless only Cafetariaplan credentials are set; with none at all, startBusinessDelivery names what is missing.
  if (business !== undefined || cafetariaplan === undefined)
    started.running.push(
      await startBusinessDelivery(ctx.config, ctx.logger, {
        prefix: redisPrefix(ctx.config),
        delivery,
        ...observed,
        prefetchToken: true,
        adoptRedisClock: true,
      }),
    );
  // Employee accounts whenever Cafetariaplan credentials are set: a second BullMQ worker on the accounts queue.
  if (cafetariaplan !== undefined)
    started.running.push(
      await startAccountDelivery(ctx.config, ctx.logger, {
        prefix: redisPrefix(ctx.config, 'cafetariaplan'),
        delivery,
        ...observed,
        adoptRedisClock: true,
      }),
    );
}

/**
 * Closes the workers, then the observers, within what is left of the grace period since the stop
 * at `stopAt`; exit 0, or the infrastructure exit when they could not close in time.
 */
async function closeWithinGrace(started: Started, stopAt: number, ctx: CommandContext): Promise<number> {
  // Requests in flight get most of the grace period (each worker's close bounds its own); this
  // bound covers the rest (token cache, scheduled imports, observers) when Redis is down, so
  // SIGTERM always ends the process within the grace period.
  const limitMs = Math.max(
    0,
    shutdownBudget(ctx.config.delivery.shutdownGraceMs).exitByMs - (Date.now() - stopAt) - EXIT_DELAY_MS,
  );
  const closed = await Promise.race([
    Promise.all(started.running.map((worker) => worker.close()))
      .then(() => started.observers?.close())
      .then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), limitMs).unref()),
  ]);
  if (!closed) {
    ctx.logger.error(
      { limitMs },
      'worker could not close cleanly (Redis unreachable?); exiting anyway: unfinished jobs come back as stalled',
    );
    exitSoon(ExitCode.infrastructure);
    return ExitCode.infrastructure;
  }
  return ExitCode.ok;
}

/**
 * Connections still retrying would keep the process alive after a stop that could not close them:
 * the one place a command ends the process itself (unref'd: a clean exit comes first).
 */
function exitSoon(code: number): void {
  setTimeout(() => process.exit(code), EXIT_DELAY_MS).unref();
}

/** How long `exitSoon` leaves a clean exit to happen first. */
const EXIT_DELAY_MS = 200;
