/**
 * The delivery benchmark on a Redis Cluster (three local `redis-server --cluster-enabled yes`
 * nodes, test/helpers/redisCluster.ts): the same file imported by the real CLI with
 * BULKORDER_REDIS_CLUSTER_NODES, P paused `bulkorder worker --processes 1` processes, timed from
 * resume until the batch record counts every order settled. One environment and kind live in
 * one slot (one node), so this measures what the cluster client costs, not a spread over nodes:
 * the spread comes from several environments or kinds (customers, targets).
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { SecretUrl } from '../src/config.js';
import { BatchStore } from '../src/batches/batchStore.js';
import { keyspace } from '../src/keyspace.js';
import { ORDERS_QUEUE } from '../src/queues.js';
import { createRedis, deleteKeysUnder } from '../src/redis.js';
import { startTestCluster } from '../test/helpers/redisCluster.js';
import type { DeliveryRun, ProductRunOptions, SimulatorProcess } from './deliveryBench.js';
import { benchEnv } from './importBench.js';
import { loadConfig, redisPrefix } from '../src/config.js';
import { totalCpuSeconds } from './lib/cpuSeconds.js';
import { cpuPer1000, waitUntilSettled } from './lib/followDelivery.js';
import { forgetImports } from './lib/benchData.js';
import { load } from './lib/benchStats.js';
import { cliEntry, runNode, startNode, type StartedChild } from './lib/nodeChild.js';

/** Calls of every command on every master since the last RESETSTAT. */
async function clusterCalls(client: Cluster): Promise<number> {
  let total = 0;
  for (const node of client.nodes('master')) {
    const info = await node.info('commandstats');
    for (const match of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
      if (!/^(info|config|ping|client|flushall|hello|select|cluster|readonly|command)/.test(match[1]!))
        total += Number(match[2]);
    }
  }
  return total;
}

export async function clusterRun(
  sim: SimulatorProcess,
  file: string,
  options: Omit<ProductRunOptions, 'breakdown'>,
): Promise<DeliveryRun> {
  const { concurrency, processes, ordersPerJob } = options;
  const cluster = await startTestCluster();
  const endpoint = {
    redisUrl: new SecretUrl('redis://127.0.0.1:6379'),
    redisClusterNodes: cluster.nodes.split(',').map((n) => ({ host: n.split(':')[0]!, port: Number(n.split(':')[1]) })),
  };
  const client = createRedis(endpoint, 'worker');
  if (!(client instanceof Cluster)) throw new Error('expected a cluster client');
  // The import decides the chunking, the workers must agree: both get BULKORDER_ORDERS_PER_JOB.
  const base = benchEnv('redis://127.0.0.1:6379', {
    BULKORDER_REDIS_CLUSTER_NODES: cluster.nodes,
    BULKORDER_BASE_URL: sim.url,
    BULKORDER_ORDERS_PER_JOB: String(ordersPerJob),
  });
  const prefix = redisPrefix(loadConfig({ env: {}, overrides: base }));
  const queue = new Queue(ORDERS_QUEUE, { connection: client, prefix });
  const rejects = join(tmpdir(), `bench-cluster-${process.pid}.rejects.csv`);
  const workers: StartedChild[] = [];
  try {
    await sim.reset();
    await queue.pause();
    await forgetImports(file);
    const imported = await runNode(cliEntry, ['import', file, '--rejects', rejects], base, [0, 4]);
    const batchId = /batch (b-\S+)/.exec(imported.stdout)?.[1];
    const queued = Number(/queued (\d+)/.exec(imported.stdout)?.[1] ?? 0);
    if (batchId === undefined || queued === 0)
      throw new Error(`import queued nothing:\n${imported.stdout}\n${imported.stderr.slice(-2000)}`);
    const env = { ...base, BULKORDER_BASE_URL: sim.url, BULKORDER_CONCURRENCY: String(concurrency) };
    for (let i = 0; i < processes; i++) workers.push(await startNode(cliEntry, ['worker', '--processes', '1'], env));
    while ((await queue.getWorkersCount()) < processes) await new Promise((r) => setTimeout(r, 50));
    const batches = new BatchStore(client, keyspace(prefix), 24 * 60 * 60 * 1000);
    for (const node of client.nodes('master')) await node.config('RESETSTAT');
    const workerPids = workers.map((w) => w.child.pid ?? 0);
    const before = { workers: await totalCpuSeconds(workerPids), redis: await totalCpuSeconds(cluster.pids) };
    const loadNow = load();
    const started = performance.now();
    await queue.resume();
    const { notDelivered } = await waitUntilSettled(batches, batchId, queued, workers);
    const seconds = (performance.now() - started) / 1000;
    const workerCpu = (await totalCpuSeconds(workerPids)) - before.workers;
    const redisCpu = (await totalCpuSeconds(cluster.pids)) - before.redis;
    const calls = await clusterCalls(client);
    const counters = await sim.counters();
    return {
      concurrency,
      processes,
      ordersPerJob,
      orders: queued,
      seconds,
      ordersPerSecond: queued / seconds,
      load: loadNow,
      tokenRequests: counters.tokenRequests.business,
      tokenBudget: seconds / 5,
      notDelivered,
      totalCommandsPerOrder: calls / queued,
      cpuPer1000: cpuPer1000(workerCpu, redisCpu, queued),
    };
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.done));
    await queue.close();
    await deleteKeysUnder(client, prefix); // a cluster of .ci/run's is shared: never FLUSHALL it
    client.disconnect();
    await cluster.stop();
    await rm(rejects, { force: true });
  }
}
