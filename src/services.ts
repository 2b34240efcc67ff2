import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { BatchStore } from './batches/batchStore.js';
import { keyspace, type Keyspace } from './keyspace.js';
import { Ledger } from './ledger/ledger.js';
import { ORDERS_QUEUE, type DeliveryJobData, type OrderJobData } from './orderJob.js';
import { assertRedisReady, createRedis, type RedisRole } from './redis.js';
import type { DeliverySettings } from './worker/deliverySettings.js';

/** Name of BullMQ's custom backoff type that src/worker/backoff.ts implements. */
export const BACKOFF_TYPE = 'bulkorder';

/** What every Redis-backed command works with; `close()` ends every connection it made. */
export interface Services<D extends DeliveryJobData<unknown> = OrderJobData> {
  readonly redis: Redis;
  readonly keys: Keyspace;
  readonly queue: Queue<D>;
  readonly ledger: Ledger;
  readonly batches: BatchStore;
  readonly jobOptions: JobsOptions;
  close(): Promise<void>;
}

export interface ServicesOptions {
  redisUrl: string;
  /** Key prefix, `bulkorder:<env>` (src/config.ts `redisPrefix`); tests use their own. Employee accounts use `<that>:accounts`. */
  prefix: string;
  /** BullMQ queue the ledger and importer work with; default `orders` (src/accounts: `accounts`). */
  queueName?: string;
  delivery: DeliverySettings;
  /** `producer` for CLI commands (fail fast), `worker` for long-running processes (wait out blips). */
  role?: RedisRole;
}

/**
 * Connects to Redis, refuses one that may evict (src/redis.ts), and builds the queue, ledger
 * and batch store over one connection.
 */
export async function openServices<D extends DeliveryJobData<unknown> = OrderJobData>(options: ServicesOptions): Promise<Services<D>> {
  const redis = createRedis(options.redisUrl, options.role ?? 'producer');
  try {
    await assertRedisReady(redis, options.redisUrl, { requirePersistence: options.delivery.requirePersistentRedis });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const keys = keyspace(options.prefix);
  const queueName = options.queueName ?? ORDERS_QUEUE;
  const queue = new Queue<D>(queueName, { connection: redis, prefix: options.prefix });
  queue.on('error', () => undefined); // surfaced by the command that awaits the failing call
  const ledger = new Ledger(redis, keys, {
    queueName,
    retentionMs: options.delivery.ledgerRetentionMs,
    parkedRetentionMs: options.delivery.parkedRetentionMs,
    ambiguousPolicy: options.delivery.ambiguousPolicy,
  });
  return {
    redis,
    keys,
    queue,
    ledger,
    batches: new BatchStore(redis, keys, options.delivery.ledgerRetentionMs),
    jobOptions: deliveryJobOptions(options.delivery),
    async close() {
      await queue.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}

/**
 * Options of every delivery job. Jobs are removed when they end: the ledger, the batch
 * record and the dead-letter and review stores keep what matters, and a removed job frees
 * its id (the order key) for a re-import of a fixed row.
 */
export function deliveryJobOptions(delivery: DeliverySettings): JobsOptions {
  return {
    attempts: delivery.attempts,
    backoff: { type: BACKOFF_TYPE },
    removeOnComplete: true,
    removeOnFail: true,
  };
}
