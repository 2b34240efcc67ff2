import type { JobsOptions, Queue } from 'bullmq';
import { bullmq } from './cjsPackages.js';
import type { RedisClient } from './redis.js';
import { BatchStore } from './batches/batchStore.js';
import { cancelBatch } from './batches/batchCircuit.js';
import { wakeBatchJobs } from './batches/wakeBatch.js';
import { PutBackChunks } from './batches/putBackChunks.js';
import { redisPrefix, type Config, type CsvOutputSettings, type FileSettings } from './config.js';
import type { ChunkJobData } from './deliveryJob.js';
import type { DeliverySettings } from './deliverySettings.js';
import { keyspace, type Keyspace } from './keyspace.js';
import type { RecordKind } from './kinds/recordKind.js';
import { Ledger } from './ledger/ledger.js';
import { ensureNamespaceMarker, type EnsuredMarker } from './ledger/namespaceMarker.js';
import { bulkorderVersion } from './paths.js';
import type { Logger } from './logger.js';
import { deliveryJobOptions } from './queues.js';
import { assertRedisReady, createRedis, throughFailover, type RedisRole } from './redis.js';
import { adoptClock, RedisClock } from './redis/redisClock.js';
import { startTracing, type Tracing } from './tracing/tracing.js';

/**
 * The import pipeline of one record kind: what importFile, requeues (dead-letters retry, review
 * release) and scheduled imports need. Built by `services.pipeline(logger)`.
 */
export interface ImportDeps<P> {
  queue: Queue<ChunkJobData<P>>;
  ledger: Ledger;
  batches: BatchStore;
  env: string;
  logger: Logger;
  /** BullMQ options of every delivery job (attempts, backoff, retention). */
  jobOptions: JobsOptions;
  /** Records per BullMQ job of an import (BULKORDER_ORDERS_PER_JOB); default 1: a chunk of one for each. */
  ordersPerJob?: number;
  /** The record kind: its reader, job name and noun. */
  kind: Pick<RecordKind<P>, 'noun' | 'jobName' | 'openSource' | 'rebuildRows' | 'payloadCodec'>;
  /** How rejects and results depart from the input's CSV dialect (BULKORDER_OUTPUT_*); default: the input's. */
  csvOutput?: CsvOutputSettings;
  /** Where scheduled imports keep their trail (BULKORDER_RESULTS_DIR); see src/batches/resultsTrail.ts. */
  resultsDir?: string;
  /**
   * Runs a step of Redis commands that is safe to repeat, again through a Redis Cluster failover, for up to
   * BULKORDER_REDIS_FAILOVER_MAX_MS (src/redis/clusterFailover.ts `throughFailover`); default: once.
   */
  rideFailover?: <T>(step: () => Promise<T>) => Promise<T>;
  /** OpenTelemetry (OTEL_* variables): the import's span, whose context its jobs carry; none when off. */
  tracing?: Tracing;
  /**
   * Cancels every unsent order of a batch (its circuit `cancelled`, src/batches/batchCircuit.ts): an import
   * whose file changed while it was read ends its batch so (FILE_CHANGED_WHILE_READ). None: not cancelled.
   */
  cancelBatch?: (batchId: string, why: string) => Promise<void>;
  /**
   * Promotes the batch's chunks that rest delayed (src/batches/wakeBatch.ts): a worker that took one while
   * the file was read put it back; once the read ends they go at once. None: they wait out their rest.
   */
  wakeBatch?: (batchId: string) => Promise<void>;
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
  readonly queue: Queue<ChunkJobData<P>>;
  readonly ledger: Ledger;
  readonly batches: BatchStore;
  readonly jobOptions: JobsOptions;
  /** The delivery settings these were opened with (retention, attempts). */
  readonly delivery: DeliverySettings;
  /** Where trails go and how CSV files are written (BULKORDER_RESULTS_DIR, BULKORDER_OUTPUT_*). */
  readonly files: FileSettings;
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
  /**
   * Run this process's Date.now() on Redis's clock until `close()` (adoptClock): a process whose
   * BullMQ calls stamp jobs (`import`, `watch`, `dead-letters retry`, `review release`, the
   * dashboard). A job's `timestamp` is when it was queued, which a worker compares with times
   * taken from Redis (a close that proved a customer refused: src/worker/refusedCustomers.ts), and
   * a delay counts from it. Default false: a library caller's process keeps its own clock.
   */
  adoptRedisClock?: boolean;
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
  let clock: AdoptedClock;
  try {
    await assertRedisReady(redis, config.redisUrl, {
      requirePersistence: (options.delivery ?? config.delivery).requirePersistentRedis,
      requireVerifiable: (options.delivery ?? config.delivery).requireVerifiableRedis,
      ...(options.allowEviction === true ? { allowEviction: true } : {}),
    });
    namespace = await ensureNamespaceMarker(redis, keys, { processVersion: bulkorderVersion() });
    clock = await adoptedClock(redis, options.adoptRedisClock === true);
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const delivery = options.delivery ?? config.delivery;
  const retentionMs = kind.retentionMs(delivery);
  // Traced (OTEL_*): each job added carries the active trace to the worker that runs it.
  const tracing = await startTracing(config.tracing);
  const queue = new (bullmq().Queue)<ChunkJobData<P>>(kind.queueName, {
    connection: redis,
    prefix,
    ...(tracing === undefined ? {} : { telemetry: tracing.bullmq }),
  });
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
    files: config.files,
    pipeline: (logger) => ({
      queue,
      ledger,
      batches,
      env: config.env,
      logger,
      jobOptions,
      ordersPerJob: delivery.ordersPerJob,
      kind,
      csvOutput: config.files.csv,
      resultsDir: config.files.resultsDir,
      rideFailover: (step) => throughFailover(redis, step),
      cancelBatch: async (batchId, why) => {
        await cancelBatch(redis, keys, batchId, { by: 'bulkorder import', why: why.slice(0, 500) });
      },
      wakeBatch: async (batchId) => {
        await wakeBatchJobs(queue, new PutBackChunks(redis, keys), batchId);
      },
      ...(tracing === undefined ? {} : { tracing }),
    }),
    async close() {
      await queue.close().catch(() => undefined);
      clock.undo();
      redis.disconnect();
    },
  };
}

/** Redis's clock adopted as this process's Date.now() (adoptClock); `undo` ends it. */
interface AdoptedClock {
  undo(): void;
}

/** Redis's clock adopted as this process's Date.now() when `adopt`; otherwise nothing is changed. */
async function adoptedClock(redis: RedisClient, adopt: boolean): Promise<AdoptedClock> {
  if (!adopt) return { undo: () => undefined };
  const clock = await new RedisClock(redis).start();
  const unadopt = adoptClock(clock);
  return {
    undo() {
      unadopt();
      clock.stop();
    },
  };
}
