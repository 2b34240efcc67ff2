import { afterAll, afterEach, beforeAll } from 'vitest';
import type { SimulatorOptions } from '../../src/simulator/index.js';
import { killAllCli, startCli, waitFor, type CliProcess } from './cliProcess.js';
import { deliveryRig, type DeliveryRig } from './deliveryRig.js';
import { startFailoverCluster, type FailoverCluster } from './redisCluster.js';

/** What a failover test file works with: its cluster, the rig on it, and the master it kills. */
export interface FailoverRun {
  readonly cluster: FailoverCluster;
  /** A delivery rig whose processes use the cluster; closed after the test. */
  rig(name: string, simulatorOptions?: SimulatorOptions): Promise<DeliveryRig>;
  /** The port of the master of the rig's slot (every key of its orders), looked up before the run so the kill is prompt. */
  ordersMaster(r: DeliveryRig): Promise<number>;
  /** Kills that master, remembered for afterEach (which starts it again as a replica). */
  kill(port: number): Promise<void>;
}

/**
 * Registers the hooks of a file of Redis Cluster failover tests: a 3 + 3 cluster of its own (node timeout
 * `nodeTimeoutMs`) for the file; after each test its CLI processes and rig stopped, and the node it killed
 * started again (it rejoins as a replica, so the next test has a replica to fail over to).
 */
export function useFailoverCluster(nodeTimeoutMs: number): FailoverRun {
  let cluster: FailoverCluster | undefined;
  let rig: DeliveryRig | undefined;
  let killed: number | undefined;
  const started = (): FailoverCluster => {
    if (cluster === undefined) throw new Error('the failover cluster is not started (beforeAll)');
    return cluster;
  };
  beforeAll(async () => {
    cluster = await startFailoverCluster(nodeTimeoutMs);
  }, 120_000);
  afterEach(async () => {
    await killAllCli();
    await rig?.close().catch(() => undefined);
    rig = undefined;
    if (killed !== undefined) {
      await started().setNodeTimeout(nodeTimeoutMs);
      await started().restart(killed);
      killed = undefined;
    }
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return {
    get cluster() {
      return started();
    },
    async rig(name, simulatorOptions = {}) {
      rig = await deliveryRig(name, simulatorOptions, { BULKORDER_REDIS_CLUSTER_NODES: started().nodes });
      return rig;
    },
    async ordersMaster(r) {
      const key = `${r.prefix}:any`;
      await started().settled(key);
      return started().masterOf(key);
    },
    async kill(port) {
      killed = port;
      await started().kill(port);
    },
  };
}

/** How many orders the latest batch queued, as the rig's own client reads it; 0 while the cluster does not answer. */
export async function latestEnqueued(r: DeliveryRig): Promise<number> {
  try {
    return (await r.services.batches.list(1))[0]?.enqueued ?? 0;
  } catch {
    return 0;
  }
}

/** A `bulkorder worker` process (concurrency 20, info logs) on the rig, once it says it started. */
export async function startClusterWorker(r: DeliveryRig): Promise<CliProcess> {
  const worker = startCli(['worker'], { ...r.env, LOG_LEVEL: 'info', BULKORDER_CONCURRENCY: '20' });
  await waitFor(() => worker.output().includes('delivery worker started'), 'the worker started', 120_000);
  return worker;
}

/** SIGTERM, and the exit code: 0 when the process stopped as it should. */
export async function stopProcess(process: CliProcess): Promise<number | string> {
  process.child.kill('SIGTERM');
  return process.exited;
}
