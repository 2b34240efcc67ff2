import type { Job } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { JOB_DATA_VERSION, type ChunkJobData } from '../../src/deliveryJob.js';
import { NEWEST_PACKED_LAYOUT } from '../../src/ingest/packedLayouts.js';
import { readJob, type JobOfOneData } from '../../src/ledger/jobData.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { chunkJobId } from '../../src/queues.js';
import { waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';

/**
 * A rolling deploy seen from an older worker: jobs written by a newer bulkorder (a higher data
 * version, a packed layout it does not know) are left in the queue, attempts unspent and nothing
 * sent, until a worker that reads them comes. Real Redis, BullMQ worker and simulator.
 */

let rig: DeliveryRig | undefined;
const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('a job of a newer bulkorder', () => {
  it('is left queued by this worker, nothing sent and no attempt spent; read once it can be, it is delivered', async () => {
    rig = await deliveryRig('unreadable', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const imported = await rig.importFile(await rig.writeFile('newer.csv', ordersCsv('NW', 3)));
    const { queue, ledger } = rig.services;
    const chunk = (await queue.getJob(chunkJobId(imported.batchId, 1))) as Job<ChunkJobData>;
    const original = chunk.data;
    const keys = original.records.map((record) => record.key);
    // As a newer importer would write them: a chunk packed in a layout this code lacks, and a job of one (as
    // earlier releases queued) of a newer version.
    await chunk.updateData({ ...original, pk: NEWEST_PACKED_LAYOUT + 1 });
    const one = readJob(original, chunk.id!, ORDERS.payloadCodec).chunk.records[0]!;
    const newerOne: JobOfOneData<unknown> = {
      ...one,
      key: 'newer-one',
      v: JOB_DATA_VERSION + 1,
      batchId: imported.batchId,
    };
    await queue.add('deliver-order', newerOne as unknown as ChunkJobData, {
      ...rig.services.jobOptions,
      jobId: 'newer-one',
    });

    await rig.startWorker({ concurrency: 2 });
    const stateOf = async (id: string): Promise<string | undefined> => (await queue.getJob(id))?.getState();
    await waitFor(
      async () => (await stateOf(chunk.id!)) === 'delayed' && (await stateOf('newer-one')) === 'delayed',
      'both jobs put back',
    );
    const [chunkAfter, oneAfter] = [
      (await queue.getJob(chunk.id!)) as Job<ChunkJobData>,
      await queue.getJob('newer-one'),
    ];
    expect([await chunkAfter.getState(), await oneAfter!.getState()]).toEqual(['delayed', 'delayed']);
    expect([chunkAfter.attemptsMade, oneAfter!.attemptsMade]).toEqual([0, 0]);
    expect(rig.simulator.counters().apiRequests.business).toBe(0);
    expect((await ledger.getMany(keys)).map((entry) => entry?.state)).toEqual(['queued', 'queued', 'queued']);

    // The newer worker arrives (here: the data back in a layout this one reads): the same job delivers every order once.
    await chunkAfter.updateData(original);
    await chunkAfter.promote();
    await oneAfter!.remove();
    const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 50,
      timeoutMs: 25_000,
      out: quiet,
    });
    expect(settled, JSON.stringify(batch)).toBe(true);
    expect(batch).toMatchObject({ enqueued: 3, delivered: 3, dead: 0, held: 0 });
    expect(rig.simulator.counters().ordersAccepted).toBe(3);
  });
});
