/**
 * bulkorder as a library (`import { openBulkorder } from 'bulkorder'`): what an application needs
 * of the same engine the CLI runs. Every promise of the CLI holds here: an import reserves each
 * record in the ledger before it is queued, and workers (`bulkorder worker`) deliver it exactly once.
 *
 * ```ts
 * const config = loadConfig({ envFile: '.env' });
 * const bulkorder = await openBulkorder(config);
 * try {
 *   const { batchId } = await bulkorder.importFile('orders.csv');
 *   const { batch } = await bulkorder.followBatch(batchId, { timeoutMs: 600_000 });
 * } finally {
 *   await bulkorder.close();
 * }
 * ```
 */
import { Writable } from 'node:stream';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { followBatch as followStoredBatch } from './batches/followBatch.js';
import type { Batch } from './batches/batchStore.js';
import { importFile as importStoredFile, type ImportOptions } from './importer/importFile.js';
import {
  validateFile as validateStoredFile,
  type ValidateOptions,
  type ValidateResult,
} from './ingest/validateFile.js';
import { ACCOUNTS } from './kinds/accounts.js';
import { ORDERS } from './kinds/orders.js';
import type { RecordKind } from './kinds/recordKind.js';
import { openLoginPortal, type LoginPortal } from './accounts/openLoginPortal.js';
import type { LoginTarget } from './accounts/loginUrlFor.js';
import { openServices, type Services } from './services.js';
import { readQueueStatus, type StatusReport } from './services/queueStatus.js';

export { loadConfig, type Config, type LoadConfigOptions } from './config.js';
export { BulkorderError, ExitCode, isBulkorderError } from './errors.js';
export type { Batch } from './batches/batchStore.js';
export type { ImportOptions } from './importer/importFile.js';
export type { ValidateOptions, ValidateResult } from './ingest/validateFile.js';
export type { LoginTarget } from './accounts/loginUrlFor.js';
export type { StatusReport } from './services/queueStatus.js';

/** Which records: `orders` (Business API, the default) or `accounts` (Cafetariaplan API). */
export type RecordKindName = 'orders' | 'accounts';

const KINDS: Record<RecordKindName, RecordKind<unknown>> = { orders: ORDERS, accounts: ACCOUNTS };

/**
 * Validates a file without Redis or the API, by the very path of `bulkorder validate`: counts,
 * the first errors of each kind (file, line, field, masked value) and the rejects file. Throws
 * FileRefusedError (exitCode 3) for a file refused as a whole.
 */
export function validateFile(
  file: string,
  options: ValidateOptions = {},
  kind: RecordKindName = 'orders',
): Promise<ValidateResult> {
  return validateStoredFile(file, options, KINDS[kind]);
}

/** What `importFile` returns: the batch to follow and what the file held. */
export interface ImportedFile {
  batchId: string;
  /** Records queued now, and those skipped (delivered before, held, queued by another batch). */
  counts: Awaited<ReturnType<typeof importStoredFile>>['counts'];
  rejected: number;
  rejectsPath: string | undefined;
}

/** One open connection to a target's Redis: close it when done. */
export interface Bulkorder {
  /** Queues a file's valid records as one batch (the same ledger and ORDER_REF_REUSED rules as `bulkorder import`). */
  importFile(file: string, options?: ImportOptions): Promise<ImportedFile>;
  /** Waits until the batch is settled (every record delivered, dead-lettered or held) or `timeoutMs` passed. */
  followBatch(
    batchId: string,
    options?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<{ batch: Batch; settled: boolean }>;
  /** The kind's queue, circuit breaker, workers, parked records and recent batches (`bulkorder status --json`). */
  status(options?: { batchId?: string; limit?: number }): Promise<StatusReport>;
  /** A one-time login URL for an employee registered by an accounts import (Cafetariaplan API). */
  loginUrl(target: LoginTarget): Promise<string>;
  close(): Promise<void>;
}

/** Opens the services of one record kind (default orders) on the configuration's Redis. */
export async function openBulkorder(
  config: Config,
  options: { kind?: RecordKindName; logger?: Logger } = {},
): Promise<Bulkorder> {
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const services: Services<unknown> = await openServices(config, KINDS[options.kind ?? 'orders']);
  let portal: LoginPortal | undefined;
  return {
    async importFile(file, importOptions = {}) {
      const result = await importStoredFile(file, importOptions, services.pipeline(logger));
      return {
        batchId: result.batchId,
        counts: result.counts,
        rejected: result.summary.rejected,
        rejectsPath: result.rejectsPath,
      };
    },
    followBatch: (batchId, follow = {}) =>
      followStoredBatch(services.batches, batchId, {
        out: silent(), // an application draws its own progress from the batch
        ...(follow.timeoutMs === undefined ? {} : { timeoutMs: follow.timeoutMs }),
        ...(follow.signal === undefined ? {} : { signal: follow.signal }),
      }),
    status: async (statusOptions = {}) => (await readQueueStatus(services, statusOptions)).report,
    async loginUrl(target) {
      portal ??= await openLoginPortal(config, logger);
      return portal.loginUrlFor(target);
    },
    async close() {
      await portal?.close();
      await services.close();
    },
  };
}

/** A stream that drops what it is given: followBatch's progress lines, unwanted in a library. */
function silent(): NodeJS.WriteStream {
  return new Writable({ write: (_chunk, _encoding, done) => done() }) as unknown as NodeJS.WriteStream;
}
