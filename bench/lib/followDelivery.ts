/**
 * What the delivery benchmarks (one Redis, and a cluster) share: waiting for a batch to settle
 * while its worker processes run, and CPU-seconds per 1,000 orders.
 */
import type { BatchStore } from '../../src/batches/batchStore.js';
import type { StartedChild } from './nodeChild.js';

/**
 * Polls the batch record until it counts `queued` orders settled; throws with the workers' stderr
 * if one of them exits first. Returns how many ended dead-lettered or held.
 */
export async function waitUntilSettled(
  batches: BatchStore,
  batchId: string,
  queued: number,
  workers: readonly StartedChild[],
): Promise<{ notDelivered: number }> {
  for (;;) {
    const batch = await batches.get(batchId);
    if (batch !== undefined && batch.delivered + batch.dead + batch.held >= queued)
      return { notDelivered: batch.dead + batch.held };
    if (workers.some((w) => w.child.exitCode !== null))
      throw new Error(
        `a worker exited:\n${workers
          .map((w) => w.stderr())
          .join('\n')
          .slice(-4000)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** CPU-seconds per 1,000 orders: the worker processes, Redis, and both together. */
export function cpuPer1000(
  workerCpu: number,
  redisCpu: number,
  orders: number,
): { workers: number; redis: number; total: number } {
  return {
    workers: (workerCpu / orders) * 1000,
    redis: (redisCpu / orders) * 1000,
    total: ((workerCpu + redisCpu) / orders) * 1000,
  };
}
