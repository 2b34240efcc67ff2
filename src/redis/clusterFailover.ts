/**
 * Riding a Redis Cluster failover (issue 37): a master that dies is replaced by its replica after
 * the cluster's `cluster-node-timeout` and an election; until then its slots answer with a closed
 * connection, CLUSTERDOWN, TRYAGAIN or MOVED. Every client made by src/redis.ts for a cluster waits
 * that out with bounded backoff for up to the failover limit (BULKORDER_REDIS_FAILOVER_MAX_MS), and
 * a step of several commands that ioredis cannot safely repeat itself (a pipeline or MULTI with a
 * write) is repeated here, by `throughFailover`, where the caller knows that repeating it is safe.
 * Beyond the limit: exit 5, REDIS_CLUSTER_DOWN, naming the cluster's state.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, ClusterOptions, Redis } from 'ioredis';
import { ioredis } from '../cjsPackages.js';
import { probeRedis } from './probeRedis.js';
import { InfrastructureError } from '../errors.js';
import { isRedisConnectionError } from '../redisErrors.js';

/** The default failover limit (BULKORDER_REDIS_FAILOVER_MAX_MS): a default cluster-node-timeout (15 s), an election and slack. */
export const DEFAULT_FAILOVER_MAX_MS = 60_000;

/** ioredis's wait before a command is tried again on a closed connection, CLUSTERDOWN or TRYAGAIN. */
const RETRY_DELAY_MS = 200;
/** The longest pause between two reconnects of a cluster that lost every node, and between two tries of a step. */
const MAX_BACKOFF_MS = 2_000;

/** A cluster client's seed nodes and failover limit (src/redis.ts records them when it makes one). */
interface ClusterFacts {
  limitMs: number;
  seeds: readonly { host: string; port: number }[];
}
const facts = new WeakMap<Cluster, ClusterFacts>();

/**
 * ioredis Cluster options that wait a failover out for about `limitMs`: every command retried every
 * 200 ms on a closed connection, CLUSTERDOWN or TRYAGAIN (MOVED and ASK followed at once), as many
 * times as fit in the limit (`maxRedirections`), the slot map refreshed as it goes; a cluster that
 * lost every node reconnects with backoff (100 ms doubling to 2 s), for ever for a worker (it waits
 * for Redis) and until the limit for a command (`producer`), which then fails and exits 5.
 */
export function failoverOptions(limitMs: number, role: 'worker' | 'producer'): Partial<ClusterOptions> {
  let lostSince: number | undefined;
  return {
    retryDelayOnFailover: RETRY_DELAY_MS,
    retryDelayOnClusterDown: RETRY_DELAY_MS,
    retryDelayOnTryAgain: RETRY_DELAY_MS,
    retryDelayOnMoved: 0,
    maxRedirections: Math.ceil(limitMs / RETRY_DELAY_MS) + 16,
    slotsRefreshTimeout: 2_000,
    clusterRetryStrategy: (times: number) => {
      if (times === 1) lostSince = Date.now();
      if (role === 'producer' && Date.now() - (lostSince ?? Date.now()) > limitMs) return null;
      return Math.min(100 * 2 ** Math.min(times - 1, 5), MAX_BACKOFF_MS);
    },
  };
}

/** Records a cluster client's failover limit and seed nodes, for throughFailover and the exit-5 message. */
export function rememberCluster(cluster: Cluster, known: ClusterFacts): void {
  facts.set(cluster, known);
}

/**
 * Runs `step`, and while it fails for want of the cluster (a closed connection, CLUSTERDOWN,
 * TRYAGAIN, too many redirections, a cluster not ready) runs it again after a backoff (100 ms
 * doubling to 2 s), for up to the client's failover limit; then throws REDIS_CLUSTER_DOWN (exit 5)
 * naming the cluster's state. Only for steps that may run twice (idempotent, or made so by their
 * caller). A single Redis (not a cluster): `step` once, its error as it is.
 */
export async function throughFailover<T>(redis: Redis | Cluster, step: () => Promise<T>): Promise<T> {
  if (!(redis instanceof ioredis().Cluster)) return step();
  const limitMs = facts.get(redis)?.limitMs ?? DEFAULT_FAILOVER_MAX_MS;
  let since: number | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isRedisConnectionError(error)) throw error;
      since ??= Date.now();
      if (Date.now() - since >= limitMs) throw await clusterDown(redis, limitMs, error);
      await sleep(Math.min(100 * 2 ** Math.min(attempt, 5), MAX_BACKOFF_MS));
    }
  }
}

/** Follows the failures of a run of steps that are each tried again by their caller (failoverClock). */
export interface FailoverClock {
  /**
   * A step failed: REDIS_CLUSTER_DOWN (exit 5, naming the cluster's state) when it is that already, or when
   * steps have failed for want of the cluster for the failover limit since the last one that succeeded;
   * else undefined (try again).
   */
  failed(error: unknown): Promise<InfrastructureError | undefined>;
  /** A step succeeded: the failover, if there was one, is over. */
  succeeded(): void;
}

/**
 * For a caller that repeats whole steps itself (`watch --once` tries a drop-folder file again): gives up with
 * REDIS_CLUSTER_DOWN once the cluster has failed them for BULKORDER_REDIS_FAILOVER_MAX_MS, as `throughFailover`
 * does for one step. A single Redis (not a cluster): never gives up here (undefined).
 */
export function failoverClock(redis: Redis | Cluster): FailoverClock {
  let since: number | undefined;
  return {
    async failed(error) {
      if (!(redis instanceof ioredis().Cluster)) return undefined;
      if (error instanceof InfrastructureError && error.code === 'REDIS_CLUSTER_DOWN') return error;
      if (!isRedisConnectionError(error)) return undefined;
      const limitMs = facts.get(redis)?.limitMs ?? DEFAULT_FAILOVER_MAX_MS;
      since ??= Date.now();
      return Date.now() - since >= limitMs ? clusterDown(redis, limitMs, error) : undefined;
    },
    succeeded() {
      since = undefined;
    },
  };
}

/** REDIS_CLUSTER_DOWN (exit 5) for a cluster still not serving after `limitMs`, naming its state as a live node tells it. */
async function clusterDown(cluster: Cluster, limitMs: number, cause: unknown): Promise<InfrastructureError> {
  const seeds = (facts.get(cluster)?.seeds ?? []).map((node) => `${node.host}:${node.port}`);
  const state = await describeClusterState(cluster);
  return new InfrastructureError(
    'REDIS_CLUSTER_DOWN',
    `the Redis Cluster (${seeds.join(',')}) did not serve this command's slot for ${Math.round(limitMs / 1000)} s ` +
      `(BULKORDER_REDIS_FAILOVER_MAX_MS): ${state}; last error: ${cause instanceof Error ? cause.message : String(cause)}. ` +
      `A failover normally ends within cluster-node-timeout and an election; check the nodes ` +
      `(redis-cli -p <port> cluster nodes), then run the same command again: what was done stays done, and nothing is queued or sent twice.`,
    { cause, details: { state } },
  );
}

/**
 * The cluster's state in a line, as the first seed node that answers tells it (CLUSTER INFO and
 * CLUSTER NODES): `cluster_state:fail, 10923 of 16384 slots served, failing: 127.0.0.1:7001
 * (master)`; or that no node answers.
 */
async function describeClusterState(cluster: Cluster): Promise<string> {
  const credentials = cluster.options.redisOptions ?? {};
  const seeds = facts.get(cluster)?.seeds ?? [];
  for (const seed of seeds) {
    const target = {
      ...(credentials.username === undefined ? {} : { username: credentials.username }),
      ...(credentials.password === undefined ? {} : { password: credentials.password }),
      ...(credentials.tls === undefined ? {} : { tls: credentials.tls }),
      host: seed.host,
      port: seed.port,
      connectTimeout: 2_000,
      enableOfflineQueue: false,
    };
    try {
      return await probeRedis(undefined, target, async (probe) => {
        const info = String(await probe.call('CLUSTER', 'INFO'));
        const nodes = String(await probe.call('CLUSTER', 'NODES'));
        const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? '?';
        const failing = nodes
          .split('\n')
          .map((line) => line.trim().split(' '))
          .filter((fields) => /fail/.test(fields[2] ?? ''))
          .map((fields) => `${fields[1]?.split('@')[0] ?? '?'} (${(fields[2] ?? '').replace('myself,', '')})`);
        return (
          `cluster_state:${field('cluster_state')}, ${field('cluster_slots_ok')} of 16384 slots served, ` +
          `${field('cluster_known_nodes')} nodes known${failing.length > 0 ? `, failing: ${failing.join(', ')}` : ''} (as ${seed.host}:${seed.port} says)`
        );
      });
    } catch {
      // this seed does not answer: ask the next
    }
  }
  return `no seed node answers (${seeds.map((seed) => `${seed.host}:${seed.port}`).join(',')})`;
}
