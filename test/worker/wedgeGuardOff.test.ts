/**
 * The other half of test/worker/wedgeGuard.test.ts: without the wedge guard, the deaf worker takes nothing. In the
 * faults tier (test/tiers.ts): it holds the wedge for 15 s to show BullMQ's own watchdog does not end it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeWedgeParts, deafWorker, WEDGE_ORDERS, type WedgeParts } from '../helpers/deafWorker.js';

const parts: WedgeParts = {};
afterEach(() => closeWedgeParts(parts));

describe("the wedge guard (BullMQ's blocking wait gone deaf)", () => {
  it(
    'without the guard (BULKORDER_WEDGE_CHECK_MS=0) the same worker takes none of the waiting jobs',
    { timeout: 90_000 },
    async () => {
      const { rig, imported } = await deafWorker(parts, 'wedgeoff', { everyMs: 0, checks: 3 });
      // Twice BullMQ's own watchdog (the 5 s wait plus 1 s) and more: it does not bring the worker back.
      await sleep(15_000);
      expect(rig.simulator.counters().ordersAccepted).toBe(0);
      const counts = await rig.services.queue.getJobCounts('wait', 'active');
      expect(counts).toEqual({ wait: Math.ceil(WEDGE_ORDERS / 10), active: 0 });
      expect((await rig.services.batches.get(imported.batchId))?.delivered ?? 0).toBe(0);
    },
  );
});
