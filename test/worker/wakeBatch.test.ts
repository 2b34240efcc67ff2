import { afterEach, describe, expect, it } from 'vitest';
import { wakeBatchJobs } from '../../src/batches/wakeBatch.js';
import { chunkJobId } from '../../src/queues.js';
import { actOnBatch } from '../../src/services/batchControl.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';

/**
 * Chunks a worker put back (their batch's file was still read, its canary judged, or it was held)
 * rest delayed; once that is over they are promoted, not left to wait out their rest: the end of an
 * import, a canary that passed, a person's release or cancel. Real Redis and BullMQ, no worker: the
 * jobs' states are read from BullMQ.
 */
let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Puts the batch's first chunk back for a minute, as a worker does when the batch's circuit says wait. */
async function putBack(r: DeliveryRig, batchId: string): Promise<string> {
  const { queue } = r.services;
  const id = chunkJobId(batchId, 1);
  const job = (await queue.getJob(id))!;
  await job.remove();
  const back = await queue.add(job.name, job.data, { ...job.opts, jobId: id, delay: 60_000 });
  expect(await back.getState()).toBe('delayed');
  return id;
}

describe("waking a batch's delayed chunks", () => {
  it("promotes this batch's delayed chunks and no other batch's", async () => {
    rig = await deliveryRig('wake-batch', {}, { BULKORDER_ORDERS_PER_JOB: '2' });
    const mine = await rig.importFile(await rig.writeFile('mine.csv', ordersCsv('MI', 4)));
    const other = await rig.importFile(await rig.writeFile('other.csv', ordersCsv('OT', 2)));
    const { queue, redis } = rig.services;
    const mineJob = await putBack(rig, mine.batchId);
    const otherJob = await putBack(rig, other.batchId);

    expect(await wakeBatchJobs(queue, redis, mine.batchId)).toBe(1);
    expect(await (await queue.getJob(mineJob))!.getState()).toBe('waiting');
    expect(await (await queue.getJob(otherJob))!.getState()).toBe('delayed');
    // Nothing left to wake: a second call promotes nothing.
    expect(await wakeBatchJobs(queue, redis, mine.batchId)).toBe(0);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 2, delayed: 1 });
  });

  it('a person releasing or cancelling a batch wakes its chunks resting until the next probe', async () => {
    rig = await deliveryRig('wake-release', {}, { BULKORDER_ORDERS_PER_JOB: '2' });
    const released = await rig.importFile(await rig.writeFile('released.csv', ordersCsv('RL', 2)));
    const cancelled = await rig.importFile(await rig.writeFile('cancelled.csv', ordersCsv('CA', 2)));
    const { queue } = rig.services;
    const releasedJob = await putBack(rig, released.batchId);
    const cancelledJob = await putBack(rig, cancelled.batchId);

    await actOnBatch(rig.services, released.batchId, 'release', { by: 'anna', why: 'gateway fixed' });
    expect(await (await queue.getJob(releasedJob))!.getState()).toBe('waiting');
    expect(await (await queue.getJob(cancelledJob))!.getState()).toBe('delayed');
    await actOnBatch(rig.services, cancelled.batchId, 'cancel', { by: 'anna', why: 'wrong catalogue' });
    expect(await (await queue.getJob(cancelledJob))!.getState()).toBe('waiting');
  });
});
