import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, redisPrefix, type Config } from '../../src/config.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { openServices, type Services } from '../../src/services.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import type { DeliveryWorker } from '../../src/assembly/deliveryWorker.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { importFile, type ImportResult } from '../../src/importer/importFile.js';
import { expect } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import type { Batch } from '../../src/batches/batchStore.js';
import { deletePrefix, TEST_REDIS_URL } from './redis.js';
import { waitFor } from './cliProcess.js';
import { randomBytes } from 'node:crypto';

/** A simulator, a configuration pointing at it, Redis services under a fresh prefix, and a way to start workers. */
export interface DeliveryRig {
  simulator: Simulator;
  config: Config;
  /** The BULKORDER_* variables behind `config`, for worker processes started with the real CLI. */
  env: Record<string, string>;
  prefix: string;
  /** The orders' services (openServices(config, ORDERS)). */
  services: Services<OrderPayload>;
  logger: Logger;
  dir: string;
  startWorker(overrides?: Partial<Config['delivery']>): Promise<DeliveryWorker<OrderPayload>>;
  writeFile(name: string, text: string): Promise<string>;
  /** `importFile` with this rig's queue, ledger and batches. */
  importFile(file: string, force?: boolean): Promise<ImportResult>;
  close(): Promise<void>;
}

/** Cafetariaplan credentials of the simulator, for rigs that register employee accounts. */
export const CAFETARIAPLAN = {
  BULKORDER_CAFETARIAPLAN_CLIENT_ID: 'sim-cafetariaplan',
  BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'sim-cafetariaplan-secret',
};

/** The company of the employee samples (samples/employees.csv). */
export const COMPANY = '3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01';

export const HEADER =
  'orderRef,businessCustomerId,firstName,lastName,street,streetNumber,postalCode,city,countryCode,languageCode,email,telephoneNumber,productId,quantity';

/** One flat CSV row of a valid order for the simulator's catalogue. */
export function orderRow(ref: string, productId = 5001, quantity = 1, customer = 1001): string {
  return `${ref},${customer},Anna,de Vries,Keizersgracht,12,1015 CX,Amsterdam,NL,nl,anna.${ref.toLowerCase()}@example.nl,+31612345678,${productId},${quantity}`;
}

/** A CSV of `count` valid one-line orders `<prefix>-1`...; `customerOf(i)` picks each order's customer. */
export function ordersCsv(prefix: string, count: number, customerOf: (i: number) => number = () => 1001): string {
  const rows = [HEADER];
  for (let i = 1; i <= count; i++) rows.push(orderRow(`${prefix}-${i}`, 5001, 1, customerOf(i)));
  return rows.join('\n') + '\n';
}

export async function deliveryRig(
  name: string,
  simulatorOptions: SimulatorOptions = {},
  envOverrides: Record<string, string> = {},
): Promise<DeliveryRig> {
  const simulator = await startSimulator({ seed: 1, ...simulatorOptions });
  const dir = await mkdtemp(join(tmpdir(), `bulkorder-${name}-`));
  const keyPrefix = `bulkorder-test-${name}-${randomBytes(4).toString('hex')}`;
  const env = {
    BULKORDER_BASE_URL: simulator.url,
    BULKORDER_USER_AGENT: 'Test-BulkorderTests',
    BULKORDER_BUSINESS_CLIENT_ID: 'sim-business',
    BULKORDER_BUSINESS_CLIENT_SECRET: 'sim-business-secret',
    BULKORDER_REDIS_PREFIX: keyPrefix,
    REDIS_URL: TEST_REDIS_URL,
    BULKORDER_BACKOFF_BASE_MS: '50',
    BULKORDER_BACKOFF_MAX_MS: '200',
    LOG_LEVEL: 'silent',
    // One process per CLI worker: tests that kill a worker mean that process (--processes is tested on its own).
    BULKORDER_WORKER_PROCESSES: '1',
    // Trails of uploads and schedules (BULKORDER_RESULTS_DIR) stay inside the rig's folder, removed at close.
    BULKORDER_DATA_DIR: join(dir, 'data'),
    ...envOverrides,
  };
  const config = loadConfig({
    env: {},
    overrides: env,
  });
  const prefix = redisPrefix(config);
  const services = await openServices(config, ORDERS);
  const logger = createLogger({ level: 'silent' });
  const workers: DeliveryWorker<OrderPayload>[] = [];
  return {
    simulator,
    config,
    env,
    prefix,
    services,
    logger,
    dir,
    async startWorker(overrides = {}) {
      const worker = await startBusinessDelivery(config, logger, {
        prefix,
        delivery: { ...config.delivery, ...overrides },
      });
      workers.push(worker);
      return worker;
    },
    importFile(file, force = false) {
      return importFile(file, { force }, services.pipeline(logger));
    },
    async writeFile(fileName, text) {
      const path = join(dir, fileName);
      await writeFile(path, text);
      return path;
    },
    async close() {
      // The folder and the simulator go whatever Redis does (a test may have killed the Redis it runs on).
      try {
        await Promise.all(workers.map((w) => w.close()));
        // The whole test namespace (the caller's, when it set its own): orders and accounts live under different target ids.
        await deletePrefix(services.redis, env.BULKORDER_REDIS_PREFIX);
        await services.close();
      } finally {
        await simulator.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

/** Follows the rig's batch until it settles (at most 45 s, polled every 100 ms); fails the test if it does not. */
export async function settleBatch(r: DeliveryRig, batchId: string): Promise<Batch> {
  const { batch, settled } = await followBatch(r.services.batches, batchId, {
    pollMs: 100,
    timeoutMs: 45_000,
    out: quiet,
  });
  expect(settled).toBe(true);
  return batch;
}

/**
 * Awaits `running`, an import of `file` that follows its batch (`import --wait` through runCli, a watcher),
 * with a delivery worker started once the file is read (its batch no longer `importing`; a predicate of the
 * rig's batches for several files) and closed when `running` ends. A worker beside the read would take the batch's first chunk while it is still read, and
 * that chunk rests 1.5-2.5 s to ask again (batchGate-4.lua): time a test not about that need not wait.
 */
export async function withWorkerOnceRead<T>(
  r: DeliveryRig,
  file: string | ((batches: Batch[]) => boolean),
  running: Promise<T>,
  delivery: Partial<Config['delivery']> = {},
): Promise<T> {
  let ended = false;
  void running.finally(() => (ended = true)).catch(() => undefined);
  // `file` read: its batch no longer `importing`; or whatever the predicate says of the rig's batches.
  const isRead =
    typeof file === 'string'
      ? (batches: Batch[]) => batches.some((b) => b.file === file && b.importState !== 'importing')
      : file;
  await waitFor(async () => ended || isRead(await r.services.batches.list(100)), 'the files read');
  const worker = ended
    ? undefined
    : await startBusinessDelivery(r.config, r.logger, {
        prefix: r.prefix,
        delivery: { ...r.config.delivery, ...delivery },
      });
  try {
    return await running;
  } finally {
    await worker?.close();
  }
}
