/**
 * Issue 37 item 3: a Redis Cluster failover (3 masters + 3 replicas of the test's own, the master of
 * the orders' slot SIGKILLed) while an importer queues a file and while a worker delivers it. Real CLI
 * processes, a real cluster, the simulator: every order reaches the API exactly once, and no process
 * exits 1. Beyond BULKORDER_REDIS_FAILOVER_MAX_MS the importer exits 5 naming the cluster state, and
 * its re-run says what it found queued elsewhere and that a worker will finish it.
 */
import { describe, expect, it } from 'vitest';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { ordersCsv } from '../helpers/deliveryRig.js';
import { startCli, waitFor } from '../helpers/cliProcess.js';
import { latestEnqueued, startClusterWorker, stopProcess, useFailoverCluster } from '../helpers/failoverRun.js';

const ORDERS = 3_000;
/** The cluster's node timeout: a dead master's replica takes over a few seconds after it. */
const NODE_TIMEOUT_MS = 2_000;

const run = useFailoverCluster(NODE_TIMEOUT_MS);

describe('a Redis Cluster failover (3 + 3 nodes of the test own, the master of the orders SIGKILLed)', () => {
  it('mid-import: the importer rides the failover, exit 0, every order delivered once', async () => {
    const r = await run.rig('failover-import');
    const file = await r.writeFile('night.csv', ordersCsv('FI', ORDERS));
    const worker = await startClusterWorker(r);
    const master = await run.ordersMaster(r);
    const importer = startCli(['import', file, '--wait', '--max-wait', '240'], { ...r.env, LOG_LEVEL: 'warn' });
    await waitFor(async () => (await latestEnqueued(r)) >= 100, '100 orders queued', 120_000);
    await run.kill(master);
    const exit = await importer.exited;
    const counters = r.simulator.counters();
    expect(exit, importer.output()).toBe(0);
    expect(importer.output()).toMatch(/settled: 3000 delivered, 0 dead-lettered, 0 held/);
    expect(importer.output()).toMatch(/queued 3000;/);
    expect(counters.ordersAccepted).toBe(ORDERS);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(worker.child.exitCode, worker.output().slice(-4000)).toBeNull(); // the worker rode it too
    expect(await stopProcess(worker), worker.output().slice(-4000)).toBe(0);
    recordReliability({
      fault: `Redis Cluster (3 masters + 3 replicas): the master of the orders' slot SIGKILLed mid-import (${ORDERS} orders, >= 500 queued)`,
      behaviour:
        'importer and worker retried through the failover (bounded backoff, BULKORDER_REDIS_FAILOVER_MAX_MS); import --wait exit 0, worker stopped cleanly',
      orders: ORDERS,
      lost: ORDERS - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 600_000);

  it('mid-delivery: the worker rides the failover, every order delivered once, the re-run --wait exit 0', async () => {
    // Each POST answered after 20 ms: a worker of 20 delivers for a while, so the kill lands mid-delivery.
    const r = await run.rig('failover-deliver', { faults: { latencyMs: 20 } });
    const file = await r.writeFile('day.csv', ordersCsv('FD', ORDERS));
    const imported = startCli(['import', file], { ...r.env, LOG_LEVEL: 'warn' });
    expect(await imported.exited, imported.output()).toBe(0);
    const master = await run.ordersMaster(r);
    const worker = await startClusterWorker(r);
    await waitFor(() => r.simulator.counters().ordersAccepted >= 600, '600 orders delivered', 120_000);
    expect(r.simulator.counters().ordersAccepted).toBeLessThan(ORDERS);
    await run.kill(master);
    await waitFor(() => r.simulator.counters().ordersAccepted >= ORDERS, 'every order delivered', 300_000);
    // The re-run finds every order delivered and the batch settled: nothing sent again.
    const rerun = startCli(['import', file, '--wait', '--max-wait', '120'], { ...r.env, LOG_LEVEL: 'warn' });
    expect(await rerun.exited, rerun.output()).toBe(0);
    expect(rerun.output()).toMatch(/skipped: 3000 already delivered/);
    const counters = r.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(worker.child.exitCode, worker.output().slice(-4000)).toBeNull();
    expect(await stopProcess(worker), worker.output().slice(-4000)).toBe(0);
    recordReliability({
      fault: `Redis Cluster (3 masters + 3 replicas): the master of the orders' slot SIGKILLed mid-delivery (${ORDERS} orders, >= 600 delivered)`,
      behaviour:
        'worker retried claims, settlements and BullMQ through the failover; every order delivered once; re-run import --wait exit 0',
      orders: ORDERS,
      lost: ORDERS - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 600_000);

  it('longer than BULKORDER_REDIS_FAILOVER_MAX_MS: exit 5 naming the cluster state; the re-run says a worker finishes what is queued elsewhere', async () => {
    const r = await run.rig('failover-limit');
    const file = await r.writeFile('late.csv', ordersCsv('FL', ORDERS));
    // The dead master goes unnoticed for 20 s: far beyond the importer's 1 s limit.
    await run.cluster.setNodeTimeout(20_000);
    const master = await run.ordersMaster(r);
    const importer = startCli(['import', file], {
      ...r.env,
      LOG_LEVEL: 'warn',
      BULKORDER_REDIS_FAILOVER_MAX_MS: '1000',
    });
    await waitFor(async () => (await latestEnqueued(r)) >= 50, '50 orders queued', 120_000);
    await run.kill(master);
    const exit = await importer.exited;
    expect(exit, importer.output()).toBe(5);
    expect(importer.output()).toMatch(
      /the Redis Cluster \(127\.0\.0\.1:\d+.*\) did not serve this command's slot for 1 s/,
    );
    expect(importer.output()).toMatch(/cluster_state:\w+, \d+ of 16384 slots served/);
    expect(importer.output()).not.toMatch(/internal error/);
    // The cluster fails over (the node timeout back to 2 s). Delivery paused (`bulkorder pause`), so what the stopped
    // import reserved is still queued when the re-run looks, a worker running beside it.
    await run.cluster.setNodeTimeout(NODE_TIMEOUT_MS);
    await run.cluster.settled(`${r.prefix}:any`);
    const paused = startCli(['pause'], { ...r.env, LOG_LEVEL: 'warn' });
    expect(await paused.exited, paused.output()).toBe(0);
    const worker = await startClusterWorker(r);
    const again = startCli(['import', file], { ...r.env, LOG_LEVEL: 'warn' });
    const againExit = await again.exited;
    const said = again.output();
    // Orders the stopped import reserved: pending (exit 4), said to be finished by the running worker.
    expect(againExit, said).toBe(4);
    expect(said).toMatch(
      /PENDING: \d+ order\(s\) of this file are queued by another batch \(b-[^)]+\), queued elsewhere/,
    );
    expect(said).toMatch(/an import that stopped left them \(b-[^:]+: (failed: REDIS_CLUSTER_DOWN|interrupted)/);
    expect(said).toMatch(/a worker will finish them \(1 running\)/);
    const resumed = startCli(['resume'], { ...r.env, LOG_LEVEL: 'warn' });
    expect(await resumed.exited, resumed.output()).toBe(0);
    // --wait follows them to their end.
    const waited = startCli(['import', file, '--wait', '--max-wait', '240'], { ...r.env, LOG_LEVEL: 'warn' });
    expect(await waited.exited, waited.output()).toBe(0);
    const counters = r.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(await stopProcess(worker), worker.output().slice(-4000)).toBe(0);
    recordReliability({
      fault: `Redis Cluster: the master of the orders' slot SIGKILLed mid-import, unnoticed for 20 s (cluster-node-timeout) against a 1 s BULKORDER_REDIS_FAILOVER_MAX_MS`,
      behaviour:
        'import exit 5 REDIS_CLUSTER_DOWN naming the cluster state; re-run said what was queued elsewhere and that a running worker finishes it; --wait exit 0',
      orders: ORDERS,
      lost: ORDERS - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 600_000);
});
