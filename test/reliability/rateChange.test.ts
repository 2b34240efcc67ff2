/**
 * Issue 37: the API's rate limit changes mid-run, down and then up (the simulator's sliding window,
 * 429 + Retry-After above it). The shared rate follows it both ways: every order is stored once and
 * the POSTs per order stay at most 1.2 (cut by cut, a drop from 50 to 10 req/s cost 2.9). How fast
 * it follows (>= 80% of the new limit within 20 s) is bench/rateLimitBench.ts `change`'s to measure:
 * a test counts, it does not time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { waitFor } from '../helpers/cliProcess.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

const ORDERS = 900;
/** The limits in turn (requests a second) and how many orders the API has stored when each comes in. */
const PHASES = [
  { limit: 40, from: 0 },
  { limit: 15, from: 250 },
  { limit: 80, from: 500 },
] as const;

describe('a rate limit that changes mid-run (real Redis, two workers, the simulator)', () => {
  it(`${PHASES.map((p) => `${p.limit}`).join(' -> ')} req/s: every order stored once, at most 1.2 POSTs per order`, async () => {
    rig = await deliveryRig('ratechange', { faults: { rateLimitPerSecond: PHASES[0].limit } });
    const r = rig;
    await r.startWorker({ concurrency: 10 });
    await r.startWorker({ concurrency: 10 });
    const file = await r.writeFile('changing.csv', ordersCsv('RC', ORDERS));
    const imported = await r.importFile(file);
    const limitedAt: number[] = [];
    for (const phase of PHASES.slice(1)) {
      await waitFor(() => r.simulator.counters().ordersAccepted >= phase.from, `${phase.from} orders stored`, 240_000);
      limitedAt.push(r.simulator.counters().statuses['429'] ?? 0);
      r.simulator.setFaults({ rateLimitPerSecond: phase.limit });
    }
    const { batch, settled } = await followBatch(r.services.batches, imported.batchId, {
      pollMs: 200,
      timeoutMs: 300_000,
      out: quiet,
    });
    const counters = r.simulator.counters();
    const posts = counters.apiRequests.business;
    expect(settled).toBe(true);
    expect(batch.delivered).toBe(ORDERS);
    expect(counters.ordersAccepted).toBe(ORDERS);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    // The drop was met (429s after it): the run measured what it claims to.
    expect(counters.statuses['429'] ?? 0).toBeGreaterThan(limitedAt[0]!);
    expect(posts / ORDERS, `${posts} POSTs, ${counters.statuses['429'] ?? 0} answered 429`).toBeLessThanOrEqual(1.2);
    recordReliability({
      fault: `API rate limit changed mid-run, ${PHASES.map((p) => `${p.limit}`).join(' -> ')} req/s (429 + Retry-After)`,
      behaviour: `the shared rate followed it down and up: ${(posts / ORDERS).toFixed(2)} POSTs per order, every order stored once`,
      orders: ORDERS,
      lost: ORDERS - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 400_000);
});
