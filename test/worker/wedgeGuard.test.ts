/**
 * Issue 37: a worker idle in BullMQ's blocking wait when that wait goes deaf (a Redis Cluster
 * failover was seen to) takes nothing, says nothing, for good. Reproduced on one Redis: a TCP gate
 * cuts the worker's blocking connection and swallows its reconnection (accepted, never answered),
 * so ioredis waits for its ready check and BullMQ's watchdog waits on ioredis. Jobs imported then
 * are delivered, each once, only because the wedge guard gives the worker a new BullMQ worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryRig, ordersCsv, settleBatch } from '../helpers/deliveryRig.js';
import { startBlockingGate } from '../helpers/blockingGate.js';
import {
  closeWedgeParts,
  deafWorker,
  keptLines,
  WEDGE_ORDERS as ORDERS,
  type WedgeParts,
} from '../helpers/deafWorker.js';
import { deletePrefix, TEST_REDIS_URL, testPrefix, testRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/cliProcess.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { createLogger } from '../../src/logger.js';
import { startWedgeGuard, takeableJobs, type TakeableKeys } from '../../src/worker/wedgeGuard.js';
import { bullmq } from '../../src/cjsPackages.js';
import { SCHEDULES_QUEUE } from '../../src/queues.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import type { ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { join } from 'node:path';

const parts: WedgeParts = {};
afterEach(() => closeWedgeParts(parts));

describe("the wedge guard (BullMQ's blocking wait gone deaf)", () => {
  it(
    'gives the idle worker a new BullMQ worker: every order delivered once, WORKER_WEDGED logged and counted',
    { timeout: 60_000 },
    async () => {
      const { rig, imported, lines, metrics } = await deafWorker(parts, 'wedge', { everyMs: 300, checks: 3 });
      const batch = await settleBatch(rig, imported.batchId);
      expect(batch.delivered).toBe(ORDERS);
      expect(rig.simulator.counters().ordersAccepted).toBe(ORDERS);
      expect(rig.simulator.counters().duplicateOrdersAccepted).toBe(0);
      // Once, unless a loaded machine kept the new worker from its first job for three more looks.
      const wedged = lines.filter((line) => line.code === 'WORKER_WEDGED').length;
      expect(wedged).toBeGreaterThanOrEqual(1);
      const counted = await metrics.registry.getSingleMetricAsString('bulkorder_worker_wedge_recoveries_total');
      expect(counted).toContain(`bulkorder_worker_wedge_recoveries_total{api="business"} ${wedged}`);
      recordReliability({
        fault:
          "an idle worker's BullMQ blocking wait gone deaf (its connection cut, the reconnection accepted and never answered), then a file imported",
        behaviour: `the wedge guard logged WORKER_WEDGED and replaced the BullMQ worker (${wedged}x); without it no job is taken`,
        orders: ORDERS,
        lost: ORDERS - batch.delivered - batch.dead - batch.held,
        duplicates: rig.simulator.counters().duplicateOrdersAccepted,
        held: batch.held,
      });
    },
  );

  // Without the guard (BULKORDER_WEDGE_CHECK_MS=0) the same worker takes none of the waiting jobs:
  // test/worker/wedgeGuardOff.test.ts, in the faults tier (it holds the wedge for 15 s).
});

describe("the scheduled-import worker's wedge guard", () => {
  it(
    'gives it a new BullMQ worker too: a firing that waited for its deaf wait is imported and delivered once',
    { timeout: 90_000 },
    async () => {
      const gate = await startBlockingGate(TEST_REDIS_URL, SCHEDULES_QUEUE);
      parts.gate = gate;
      const rig = await deliveryRig('wedgesched', {}, { REDIS_URL: gate.url, BULKORDER_ORDERS_PER_JOB: '10' });
      parts.rig = rig;
      const { lines, destination } = keptLines<{ code?: string; queue?: string }>();
      parts.worker = await startBusinessDelivery(rig.config, createLogger({ level: 'warn', destination }), {
        prefix: rig.prefix,
        delivery: { ...rig.config.delivery, wedgeCheck: { everyMs: 300, checks: 3 } },
      });
      await waitFor(() => gate.blockingConnections() === 1, "the scheduled-import worker's blocking connection");
      gate.deafen();
      await waitFor(() => gate.swallowed() === 1, "the blocking connection's reconnection swallowed");
      await rig.writeFile('orders-night.csv', ordersCsv('WEDGESCHED', ORDERS));
      const queue = new (bullmq().Queue)<ScheduledImportData>(SCHEDULES_QUEUE, {
        connection: rig.services.redis,
        prefix: rig.prefix,
      });
      const store = new ScheduleStore(queue);
      try {
        await store.set({ name: 'nightly', cron: '* * * * * *', source: join(rig.dir, 'orders-*.csv') });
        await waitFor(
          () => rig.simulator.counters().ordersAccepted === ORDERS,
          "the scheduled firing's orders delivered",
          75_000,
        );
        await store.remove('nightly');
      } finally {
        await queue.close();
      }
      expect(rig.simulator.counters().ordersAccepted).toBe(ORDERS);
      expect(rig.simulator.counters().duplicateOrdersAccepted).toBe(0);
      const wedged = lines.filter((line) => line.code === 'WORKER_WEDGED');
      expect(wedged.length).toBeGreaterThanOrEqual(1);
      expect(wedged.every((line) => line.queue === SCHEDULES_QUEUE)).toBe(true);
    },
  );
});

/** A real BullMQ queue under a fresh prefix, its takeable keys, and a clean-up. */
async function bareQueue(name: string) {
  const redis = testRedis();
  const prefix = testPrefix(name);
  const queue = new (bullmq().Queue)(name, { connection: redis, prefix });
  const keys: TakeableKeys = {
    wait: queue.toKey('wait'),
    prioritized: queue.toKey('prioritized'),
    delayed: queue.toKey('delayed'),
    meta: queue.toKey('meta'),
    limiter: queue.toKey('limiter'),
    limitMax: 10,
  };
  cleanups.push(async () => {
    await queue.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  return { redis, queue, keys };
}
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('what the wedge guard counts as takeable, and when it declares a wedge', () => {
  it('counts waiting, prioritized and due delayed jobs; none while the queue is paused (the breaker, a person) or its limiter is at its max, none delayed', async () => {
    const { redis, queue, keys } = await bareQueue('takeable');
    await queue.add('later', {}, { delay: 60_000 });
    expect(await takeableJobs(redis, keys)).toBe(0);
    // Once due (two minutes on), a delayed job no worker promoted is takeable: a wedged worker promotes nothing.
    expect(await takeableJobs(redis, keys, Date.now() + 120_000)).toBe(1);
    await queue.addBulk([
      { name: 'a', data: {} },
      { name: 'b', data: {} },
      { name: 'c', data: {}, opts: { priority: 5 } },
    ]);
    expect(await takeableJobs(redis, keys)).toBe(3);
    await queue.pause();
    expect(await takeableJobs(redis, keys)).toBe(0);
    await queue.resume();
    expect(await takeableJobs(redis, keys)).toBe(3);
    // The limiter's window with fewer jobs taken than its max (other workers busy) leaves them takeable.
    await redis.set(keys.limiter, '9', 'PX', 60_000);
    expect(await takeableJobs(redis, keys)).toBe(3);
    await redis.set(keys.limiter, '10', 'PX', 60_000);
    expect(await takeableJobs(redis, keys)).toBe(0);
    await queue.rateLimit(60_000);
    expect(await takeableJobs(redis, keys)).toBe(0);
    await queue.removeRateLimitKey();
    expect(await takeableJobs(redis, keys)).toBe(3);
  });

  it('recovers on the third look in a row that finds jobs waiting and none taken; a paused queue, a held or busy worker, a job started reset the count', async () => {
    const { redis, queue, keys } = await bareQueue('decide');
    await queue.addBulk([
      { name: 'a', data: {} },
      { name: 'b', data: {} },
    ]);
    const state = { started: 0, running: 0, held: false };
    let recoveries = 0;
    const guard = startWedgeGuard({
      everyMs: 0, // no timer: the test looks itself
      checks: 3,
      redis,
      keys,
      jobs: () => ({ started: state.started, running: state.running }),
      held: () => state.held,
      recover: async () => void recoveries++,
      logger: createLogger({ level: 'silent' }),
    });
    cleanups.push(async () => guard.stop());
    const looks = async (n: number) => {
      for (let i = 0; i < n; i++) await guard.check();
    };
    await looks(2);
    expect(recoveries).toBe(0);
    await looks(1);
    expect(recoveries).toBe(1);
    // Each of these, while it lasts, keeps the count from reaching three: five looks with it recover nothing.
    const breaks: [string, () => Promise<unknown> | void, () => Promise<unknown> | void][] = [
      ['queue paused', () => queue.pause(), () => queue.resume()],
      ['worker held', () => void (state.held = true), () => void (state.held = false)],
      ['a job running', () => void (state.running = 1), () => void (state.running = 0)],
      // A job started before each look: the worker takes jobs, slowly (a rate, one long job after another).
      ['jobs started', () => void state.started++, () => undefined],
    ];
    for (const [what, during, after] of breaks) {
      await looks(2);
      for (let i = 0; i < 5; i++) {
        await during();
        await looks(1);
      }
      await after();
      await looks(2);
      expect(recoveries, what).toBe(1);
      await looks(1); // the third in a row since it ended
      expect(recoveries, what).toBe(2);
      recoveries = 1;
    }
  });
});
