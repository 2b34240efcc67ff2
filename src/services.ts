import type { JobsOptions, Queue } from 'bullmq';
import { bullmq } from './cjsPackages.js';
import type { RedisClient } from './redis.js';
import { BatchStore } from './batches/batchStore.js';
import { redisPrefix, type Config } from './config.js';
import type { AnyDeliveryJobData } from './deliveryJob.js';
import type { DeliverySettings } from './deliverySettings.js';
import { keyspace, type Keyspace } from './keyspace.js';
import type { RecordKind } from './kinds/recordKind.js';
import { Ledger } from './ledger/ledger.js';
import { ensureNamespaceMarker, type EnsuredMarker } from './ledger/namespaceMarker.js';
import { bulkorderVersion } from './paths.js';
import type { Logger } from './logger.js';
import { deliveryJobOptions } from './queues.js';
import { assertRedisReady, createRedis, type RedisRole } from './redis.js';

/**
 * The import pipeline of one record kind: what importFile, requeues (dead-letters retry, review
 * release) and scheduled imports need. Built by `services.pipeline(logger)`.
 */
export interface ImportDeps<P> {
  queue: Queue<AnyDeliveryJobData<P>>;
  ledger: Ledger;
  batches: BatchStore;
  env: string;
  logger: Logger;
  /** BullMQ options of every delivery job (attempts, backoff, retention). */
  jobOptions: JobsOptions;
  /** Records per BullMQ job (BULKORDER_ORDERS_PER_JOB); default 1: a job of its own for each. */
  ordersPerJob?: number;
  /** The record kind: its reader, job names and noun. */
  kind: Pick<RecordKind<P>, 'noun' | 'jobName' | 'chunkJobName' | 'openSource' | 'rebuildRows' | 'payloadCodec'>;
}

/** What every Redis-backed command works with, for one record kind; `close()` ends every connection it made. */
export interface Services<P> {
  readonly kind: RecordKind<P>;
  readonly env: string;
  readonly redis: RedisClient;
  /** The kind's keyspace (its prefix under the environment's). */
  readonly keys: Keyspace;
  /** Its marker as opening found it (`created`: the namespace was empty; src/ledger/namespaceMarker.ts). */
  readonly namespace: EnsuredMarker;
  readonly queue: Queue<AnyDeliveryJobData<P>>;
  readonly ledger: Ledger;
  readonly batches: BatchStore;
  readonly jobOptions: JobsOptions;
  /** The delivery settings these were opened with (retention, attempts). */
  readonly delivery: DeliverySettings;
  /** What importFile, requeues and scheduled imports need: this kind's queue, ledger, batches and job options. */
  pipeline(logger: Logger): ImportDeps<P>;
  close(): Promise<void>;
}

export interface ServicesOptions {
  /** The target's key prefix; default `bulkorder:<env>:<target id>` of the kind's API (src/config.ts `redisPrefix`). The kind adds its own part. */
  prefix?: string;
  /** `producer` for CLI commands (fail fast, the default), `worker` for long-running processes (wait out blips). */
  role?: RedisRole;
  /** Delivery settings; default `config.delivery`. */
  delivery?: DeliverySettings;
  /** Opens a Redis that evicts, for a command that only reports it (`status`); default false: refused (exit 5). */
  allowEviction?: boolean;
}

/**
 * Connects to Redis, refuses one that may evict (src/redis.ts) or whose keyspace holds data of a
 * newer bulkorder (DATA_VERSION_NEWER; older data is migrated: src/ledger/namespaceMarker.ts),
 * and builds the kind's queue, ledger and batch store over one connection, in the kind's keyspace
 * with its retention.
 *
 * ```ts
 * const services = await openServices(config, ORDERS);
 * try { await importFile(file, {}, services.pipeline(logger)); } finally { await services.close(); }
 * ```
 */
export async function openServices<P>(
  config: Config,
  kind: RecordKind<P>,
  options: ServicesOptions = {},
): Promise<Services<P>> {
  // The prefix first: it refuses missing credentials before a connection exists that would keep the process alive.
  const prefix = kind.prefix(options.prefix ?? redisPrefix(config, kind.api));
  const redis = createRedis(config, options.role ?? 'producer');
  const keys = keyspace(prefix);
  let namespace: EnsuredMarker;
  try {
    await assertRedisReady(redis, config.redisUrl, {
      requirePersistence: (options.delivery ?? config.delivery).requirePersistentRedis,
      ...(options.allowEviction === true ? { allowEviction: true } : {}),
    });
    namespace = await ensureNamespaceMarker(redis, keys, { processVersion: bulkorderVersion() });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const delivery = options.delivery ?? config.delivery;
  const retentionMs = kind.retentionMs(delivery);
  const queue = new bullmq.Queue<AnyDeliveryJobData<P>>(kind.queueName, { connection: redis, prefix });
  queue.on('error', () => undefined); // surfaced by the command that awaits the failing call
  const ledger = new Ledger(redis, keys, {
    queueName: kind.queueName,
    retentionMs,
    parkedRetentionMs: delivery.parkedRetentionMs,
    ambiguousPolicy: delivery.ambiguousPolicy,
  });
  const batches = new BatchStore(redis, keys, retentionMs);
  const jobOptions = deliveryJobOptions(delivery);
  return {
    kind,
    env: config.env,
    redis,
    keys,
    namespace,
    queue,
    ledger,
    batches,
    jobOptions,
    delivery: { ...delivery, ledgerRetentionMs: retentionMs },
    pipeline: (logger) => ({
      queue,
      ledger,
      batches,
      env: config.env,
      logger,
      jobOptions,
      ordersPerJob: delivery.ordersPerJob,
      kind,
    }),
    async close() {
      await queue.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}
