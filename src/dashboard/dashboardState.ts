import { bullmq } from '../cjsPackages.js';
import { redisPrefix, type Config } from '../config.js';
import { KINDS } from '../kinds/kindByName.js';
import { ParkedStore } from '../deadLetter/parkedStore.js';
import type { Logger } from '../logger.js';
import { readState, type StateTarget } from '../health/readState.js';
import { ScheduleStore } from '../schedule/scheduleStore.js';
import type { ScheduledImportData } from '../schedule/scheduledImportJob.js';
import { SCHEDULES_QUEUE } from '../queues.js';
import { openServices, type Services } from '../services.js';
import type { RequeueDeps } from '../deadLetter/requeueParked.js';
import { startResultsWriter } from '../batches/resultsTrail.js';

/** Orders or employee accounts: what the dashboard's pages and actions work on. */
export type TargetKind = 'orders' | 'accounts';

export interface DashboardTarget {
  kind: TargetKind;
  services: Services<unknown>;
  dead: ParkedStore;
  held: ParkedStore;
  /** What dead-letters retry and review release need (the CLI's own requeue path). */
  requeue: RequeueDeps;
  /** Writes the results files of this kind's uploads (and schedules) once their batches settle. */
  results: { stop(): Promise<void> };
}

/** Everything the dashboard reads and acts on, opened once. */
export interface DashboardState {
  config: Config;
  logger: Logger;
  targets: Partial<Record<TargetKind, DashboardTarget>> & { orders: DashboardTarget };
  schedules: ScheduleStore;
  stateTargets: StateTarget[];
  close(): Promise<void>;
}

/** Opens the orders' services and, with Cafetariaplan credentials, the accounts'. */
export async function openDashboardState(config: Config, logger: Logger): Promise<DashboardState> {
  const orders = await openTarget(config, logger, 'orders');
  const accounts =
    config.credentials.cafetariaplan === undefined ? undefined : await openTarget(config, logger, 'accounts');
  const scheduleQueue = new (bullmq().Queue)<ScheduledImportData>(SCHEDULES_QUEUE, {
    connection: orders.services.redis,
    prefix: redisPrefix(config),
  });
  scheduleQueue.on('error', () => undefined);
  const stateTargets: StateTarget[] = [{ api: 'business', services: orders.services }];
  if (accounts !== undefined) stateTargets.push({ api: 'cafetariaplan', services: accounts.services });
  return {
    config,
    logger,
    targets: { orders, ...(accounts === undefined ? {} : { accounts }) },
    schedules: new ScheduleStore(scheduleQueue),
    stateTargets,
    async close() {
      await Promise.all([orders.results.stop(), accounts?.results.stop()]);
      await scheduleQueue.close().catch(() => undefined);
      await accounts?.services.close();
      await orders.services.close();
    },
  };
}

/** Reads the gauges of /metrics and the overview. */
export function dashboardSnapshot(state: DashboardState): ReturnType<typeof readState> {
  return readState(state.stateTargets);
}

async function openTarget(config: Config, logger: Logger, kind: TargetKind): Promise<DashboardTarget> {
  // Uploads, retries and releases queue jobs: stamped on Redis's clock, as `import` stamps them.
  const services = await openServices(config, KINDS[kind], { adoptRedisClock: true });
  return {
    kind,
    services,
    dead: new ParkedStore(services.redis, services.keys, services.ledger, 'dead'),
    held: new ParkedStore(services.redis, services.keys, services.ledger, 'held'),
    requeue: services.pipeline(logger),
    results: startResultsWriter({ ...services, csvOutput: services.files.csv, logger }),
  };
}
