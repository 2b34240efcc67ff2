import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import type { RequeueDeps } from '../../src/deadLetter/requeueParked.js';
import { retryDeadLetters } from '../../src/deadLetter/retryDeadLetters.js';
import { releaseHeld } from '../../src/review/releaseHeld.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { CANARY_OF_ONE } from '../helpers/breakerSettings.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/**
 * The requeue's process dies between reserving in the ledger and adding the jobs: its queue
 * call never reaches BullMQ (the throw stands for the kill; the batch's heartbeat stops with it).
 */
function dyingBeforeQueueing(r: DeliveryRig): RequeueDeps {
  return {
    ...r.services.pipeline(r.logger),
    queue: {
      addBulk: () => Promise.reject(new Error('killed between reserve and addBulk')),
    },
  };
}

/** A stream that drops the progress lines. */
const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

async function settled(r: DeliveryRig, batchId: string) {
  const { batch, settled: done } = await followBatch(r.services.batches, batchId, {
    timeoutMs: 60_000,
    pollMs: 100,
    out: quiet,
  });
  expect(done).toBe(true);
  return batch;
}

describe('a requeue that dies between the ledger and the queue loses nothing', () => {
  it("dead-letters retry: the reserved orders are queued by a worker's reconciler and delivered once", async () => {
    // A canary of one order: six refusals of one customer are dead-lettered at once (a batch of six is otherwise its
    // own canary, held with its cause: test/reliability/batchCanary.test.ts).
    rig = await deliveryRig('retry-crash', { faults: { forbiddenCustomers: [1001] } }, CANARY_OF_ONE);
    const rows = [HEADER, ...Array.from({ length: 6 }, (_, i) => orderRow(`R-${i + 1}`))];
    const file = await rig.writeFile('night.csv', rows.join('\n') + '\n');
    const first = await rig.importFile(file);
    await rig.startWorker({ concurrency: 4 }); // once the file is read: its chunks go at once
    expect(await settled(rig, first.batchId)).toMatchObject({ dead: 6 });

    // The API now serves the customer; the retry dies after reserving.
    rig.simulator.setFaults({ forbiddenCustomers: [] });
    const store = new ParkedStore(rig.services.redis, rig.services.keys, rig.services.ledger, 'dead');
    const items = await store.select();
    expect(items).toHaveLength(6);
    await expect(retryDeadLetters(items, dyingBeforeQueueing(rig))).rejects.toThrow(/killed/);
    const retryBatch = (await rig.services.ledger.get(items[0]!.record.key))!.batchId;

    // No person runs anything: the worker's reconciler (every 5 s) finds the kept jobs and queues them.
    const keys = items.map((item) => item.record.key);
    const deadline = Date.now() + 60_000;
    while (
      Date.now() < deadline &&
      (await rig.services.ledger.getMany(keys)).some((entry) => entry?.state !== 'delivered')
    ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const batch = await settled(rig, retryBatch);
    expect(batch).toMatchObject({ enqueued: 6, delivered: 6, dead: 0, held: 0 });
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(6);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(await store.count()).toBe(0);
    recordReliability({
      fault: '`dead-letters retry` killed between the ledger reservation and adding the jobs',
      behaviour: "a worker's reconciler queued the kept jobs; every order delivered once, the retry batch settled",
      orders: 6,
      lost: 6 - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 90_000);

  it('review release: a failed queue call puts the orders back on hold, listed, nothing kept for a reconciler', async () => {
    rig = await deliveryRig(
      'release-crash',
      { faults: { noAnswerRate: 1 } },
      { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300', BULKORDER_HTTP_DEADLINE_MS: '600' },
    );
    const rows = [HEADER, ...Array.from({ length: 3 }, (_, i) => orderRow(`H-${i + 1}`))];
    const file = await rig.writeFile('held.csv', rows.join('\n') + '\n');
    const first = await rig.importFile(file);
    await rig.startWorker({ concurrency: 3 }); // once the file is read: its chunks go at once
    expect(await settled(rig, first.batchId)).toMatchObject({ held: 3 });

    rig.simulator.setFaults({ noAnswerRate: 0 });
    const store = new ParkedStore(rig.services.redis, rig.services.keys, rig.services.ledger, 'held');
    const items = await store.select();
    await expect(releaseHeld(items, { by: 'anna' }, dyingBeforeQueueing(rig))).rejects.toThrow(/killed/);
    expect(await store.count()).toBe(3);
    expect(await rig.services.ledger.stranded(Date.now() + 1, 10)).toEqual([]);

    // Released again, for real: each sent and delivered (the person judged they were not on the service).
    const { made } = await releaseHeld(await store.select(), { by: 'anna' }, rig.services.pipeline(rig.logger));
    expect(await settled(rig, made[0]!.batchId)).toMatchObject({ enqueued: 3, delivered: 3 });
    expect(await store.count()).toBe(0);
  }, 90_000);
});
