/**
 * Issue 37: a worker idle in BullMQ's blocking wait when that wait goes deaf (a Redis Cluster
 * failover was seen to) takes nothing, says nothing, for good. Reproduced on one Redis: a TCP gate
 * cuts the worker's blocking connection and swallows its reconnection (accepted, never answered),
 * so ioredis waits for its ready check and BullMQ's watchdog waits on ioredis. Jobs imported then
 * are delivered, each once, only because the wedge guard gives the worker a new BullMQ worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { deliveryRig, ordersCsv, settleBatch, type DeliveryRig } from '../helpers/deliveryRig.js';
import { startBlockingGate, type BlockingGate } from '../helpers/blockingGate.js';
import { TEST_REDIS_URL } from '../helpers/redis.js';
import { waitFor } from '../helpers/cliProcess.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import type { DeliveryWorker } from '../../src/assembly/deliveryWorker.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics/bulkorderMetrics.js';
import type { WedgeCheckSettings } from '../../src/deliverySettings.js';

let rig: DeliveryRig | undefined;
let gate: BlockingGate | undefined;
let worker: DeliveryWorker<OrderPayload> | undefined;
afterEach(async () => {
  await worker?.close();
  await rig?.close();
  await gate?.close();
  worker = undefined;
  rig = undefined;
  gate = undefined;
});

const ORDERS = 30;

/** A worker through the gate, idle on an empty queue, whose blocking wait the gate then made deaf. */
async function deafWorker(name: string, wedgeCheck: WedgeCheckSettings) {
  gate = await startBlockingGate(TEST_REDIS_URL);
  rig = await deliveryRig(name, {}, { REDIS_URL: gate.url, BULKORDER_ORDERS_PER_JOB: '10' });
  const lines: { code?: string; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as { code?: string; msg: string });
      done();
    },
  });
  const metrics = createMetrics({ processMetrics: false });
  worker = await startBusinessDelivery(rig.config, createLogger({ level: 'warn', destination }), {
    prefix: rig.prefix,
    delivery: { ...rig.config.delivery, wedgeCheck },
    metrics,
  });
  const g = gate;
  await waitFor(() => g.blockingConnections() === 1, "the worker's blocking connection");
  g.deafen();
  await waitFor(() => g.swallowed() === 1, "the blocking connection's reconnection swallowed");
  const file = await rig.writeFile(`${name}.csv`, ordersCsv(name.toUpperCase(), ORDERS));
  const imported = await rig.importFile(file);
  return { rig, imported, lines, metrics };
}

describe("the wedge guard (BullMQ's blocking wait gone deaf)", () => {
  it(
    'gives the idle worker a new BullMQ worker: every order delivered once, WORKER_WEDGED logged and counted',
    { timeout: 60_000 },
    async () => {
      const { rig, imported, lines, metrics } = await deafWorker('wedge', { everyMs: 300, checks: 3 });
      const batch = await settleBatch(rig, imported.batchId);
      expect(batch.delivered).toBe(ORDERS);
      expect(rig.simulator.counters().ordersAccepted).toBe(ORDERS);
      expect(rig.simulator.counters().duplicateOrdersAccepted).toBe(0);
      expect(lines.filter((line) => line.code === 'WORKER_WEDGED')).toHaveLength(1);
      expect(await metrics.registry.getSingleMetricAsString('bulkorder_worker_wedge_recoveries_total')).toContain(
        'bulkorder_worker_wedge_recoveries_total{api="business"} 1',
      );
    },
  );

  it(
    'without the guard (BULKORDER_WEDGE_CHECK_MS=0) the same worker takes none of the waiting jobs',
    { timeout: 60_000 },
    async () => {
      const { rig, imported } = await deafWorker('wedgeoff', { everyMs: 0, checks: 3 });
      // Twice BullMQ's own watchdog (the 5 s wait plus 1 s) and more: it does not bring the worker back.
      await sleep(15_000);
      expect(rig.simulator.counters().ordersAccepted).toBe(0);
      const counts = await rig.services.queue.getJobCounts('wait', 'active');
      expect(counts).toEqual({ wait: Math.ceil(ORDERS / 10), active: 0 });
      expect((await rig.services.batches.get(imported.batchId))?.delivered ?? 0).toBe(0);
    },
  );
});
