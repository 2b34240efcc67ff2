import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import type { Batch } from '../../src/batches/batchStore.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import { retryDeadLetters } from '../../src/deadLetter/retryDeadLetters.js';
import type { ParkedRecord, StoredChunkRecord } from '../../src/deliveryJob.js';
import { newBatchId } from '../../src/importer/importFile.js';
import { chunkJob, readJob, toChunkRecord } from '../../src/ledger/jobData.js';
import { reconcileImports } from '../../src/importer/reconcileImports.js';
import { openOrderSource } from '../../src/ingest/openOrderSource.js';
import type { ValidOrder } from '../../src/ingest/types.js';
import { ORDERS } from '../../src/kinds/orders.js';
import type { LedgerEntry } from '../../src/ledger/ledger.js';
import { fingerprintOf } from '../../src/ledger/fingerprint.js';
import { chunkJobId, DELIVER_ORDERS, ORDERS_QUEUE } from '../../src/queues.js';
import { parkOrphan } from '../../src/worker/parkOrphan.js';
import { waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, HEADER, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { CANARY_OF_ONE } from '../helpers/breakerSettings.js';

/**
 * Chunk jobs end to end (BULKORDER_ORDERS_PER_JOB set explicitly): the importer, a real worker,
 * BullMQ and the simulator; every count asserted is the simulator's or the ledger's.
 */

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

async function settle(r: DeliveryRig, batchId: string, timeoutMs = 25_000): Promise<Batch> {
  const { batch, settled } = await followBatch(r.services.batches, batchId, { pollMs: 50, timeoutMs, out: quiet });
  expect(settled, JSON.stringify(batch)).toBe(true);
  return batch;
}

/** Every ledger entry of the rig, by order key. */
async function ledgerEntries(r: DeliveryRig): Promise<Map<string, LedgerEntry>> {
  const redisKeys = await r.services.redis.keys(r.services.keys.ledger('*'));
  const orderKeys = redisKeys.map((key) => key.slice(r.services.keys.ledger('').length));
  const entries = await r.services.ledger.getMany(orderKeys);
  return new Map(orderKeys.map((key, i) => [key, entries[i]!]));
}

const deadStore = (r: DeliveryRig) => new ParkedStore(r.services.redis, r.services.keys, r.services.ledger, 'dead');

describe('chunk jobs end to end (real Redis, BullMQ worker, simulator)', () => {
  it('never claims more orders than its --concurrency lets it send and one wave, however many chunk jobs the worker holds', async () => {
    rig = await deliveryRig('slots', { faults: { latencyMs: 40 } }, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('slots.csv', ordersCsv('SL', 60));
    const imported = await rig.importFile(file);
    expect(await rig.services.queue.getJobCounts('waiting')).toEqual({ waiting: 6 });
    const keys = [...(await ledgerEntries(rig)).keys()];
    // Four slots for six jobs of ten: each chunk goes in waves of four, and the jobs take turns. Only
    // the leading wave's orders wait for a slot claimed (undici's pool alone would cap the requests,
    // not the orders claimed and waiting for a connection), three at most: it claims with one slot
    // free. An answered order stays `sending` until its wave is settled while its slot already serves
    // the next job: at most twice the slots and three.
    await rig.startWorker({ concurrency: 4 });
    let peakSending = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const sending = (await rig.services.ledger.getMany(keys)).filter((entry) => entry?.state === 'sending').length;
        peakSending = Math.max(peakSending, sending);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const batch = await settle(rig, imported.batchId);
    watching = false;
    await watch;
    expect(batch).toMatchObject({ delivered: 60, dead: 0, held: 0 });
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(60);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(peakSending).toBeGreaterThanOrEqual(2);
    expect(peakSending).toBeLessThanOrEqual(2 * 4 + 3);
    expect(counters.peakConcurrency).toBeLessThanOrEqual(4);
  });

  it('23 orders in 3 jobs: 503s retried in their chunk, a 422 dead-lettered after one request and never sent again, the rest delivered once', async () => {
    rig = await deliveryRig(
      'chunks',
      {
        faults: {
          // The first three requests: of the first chunk's first wave (the first chunk takes the request slots first).
          // Without Retry-After: a 503 that says when to come back did not process the request (no possible duplicate).
          script: Array.from({ length: 3 }, () => ({
            path: 'orders' as const,
            status: 503,
            body: { code: 'MAINTENANCE', message: 'back soon' },
          })),
        },
      },
      { BULKORDER_ORDERS_PER_JOB: '10' },
    );
    const rows = [HEADER];
    for (let i = 1; i <= 22; i++) rows.push(orderRow(`CH-${i}`));
    // Unknown product (422): the first chunk's tenth record, in its second wave of 5, after the 503s.
    rows.splice(10, 0, orderRow('CH-BAD', 5999));
    const file = await rig.writeFile('chunks.csv', rows.join('\n') + '\n');

    const imported = await rig.importFile(file);
    expect(imported.counts).toMatchObject({ orders: 23, valid: 23, enqueued: 23 });
    // Before any worker: three jobs for 23 orders, with the chunk ids.
    const queue = rig.services.queue;
    expect(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).toEqual({
      waiting: 3,
      active: 0,
      delayed: 0,
      prioritized: 0,
    });
    const jobs = await queue.getJobs(['waiting']);
    const ids = [1, 2, 3].map((n) => chunkJobId(imported.batchId, n));
    expect(jobs.map((job) => job.id).sort()).toEqual(ids);
    expect(jobs.map((job) => job.name)).toEqual([DELIVER_ORDERS, DELIVER_ORDERS, DELIVER_ORDERS]);
    expect(jobs.map((job) => (job.data as { records: unknown[] }).records.length).sort()).toEqual([10, 10, 3]);
    expect(await rig.services.redis.zcard(rig.services.keys.unqueued)).toBe(0); // every chunk confirmed

    await rig.startWorker({ concurrency: 5 });
    const batch = await settle(rig, imported.batchId);
    expect(batch).toMatchObject({ enqueued: 23, delivered: 22, dead: 1, held: 0, possibleDuplicates: 3 });

    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(22);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(counters.statuses['503']).toBe(3);
    // One request for the refused order: its chunk's retry for the 503s did not send it again.
    expect(counters.statuses['422']).toBe(1);
    // Every POST is a delivery, a 503 or the one refusal: nothing was sent twice.
    expect(counters.apiRequests.business).toBe(22 + 3 + 1);

    const entries = await ledgerEntries(rig);
    expect(entries.size).toBe(23);
    const all = [...entries.values()];
    // Each record names its chunk: 10, 10 and 3.
    expect(ids.map((id) => all.filter((e) => e.chunkId === id).length)).toEqual([10, 10, 3]);
    const retried = all.filter((e) => e.attempts === 2);
    expect(retried).toHaveLength(3);
    // In the refused order's chunk: the retry that sent them skipped it.
    for (const entry of retried)
      expect(entry).toMatchObject({ state: 'delivered', answered5xx: 1, batchId: imported.batchId, chunkId: ids[0] });
    expect(all.filter((e) => e.state === 'delivered' && e.attempts === 1)).toHaveLength(19);

    const deadKeys = await rig.services.redis.zrange(rig.services.keys.parkedIndex('dead'), '0', '-1');
    expect(deadKeys).toHaveLength(1);
    expect(entries.get(deadKeys[0]!)).toMatchObject({
      state: 'dead',
      attempts: 1,
      httpStatus: 422,
      code: 'PRODUCT_UNKNOWN',
      chunkId: ids[0],
    });
    const dead = JSON.parse(
      (await rig.services.redis.get(rig.services.keys.parked('dead', deadKeys[0]!)))!,
    ) as ParkedRecord;
    expect(dead).toMatchObject({
      orderRef: 'CH-BAD',
      batchId: imported.batchId,
      file,
      lines: [11],
      httpStatus: 422,
      code: 'PRODUCT_UNKNOWN',
      attempts: 1,
    });
    expect(dead.body).toMatchObject({ code: 'PRODUCT_UNKNOWN' });
    // Every job ended and was removed: nothing waits or retries.
    expect(await queue.getJobCounts('waiting', 'active', 'delayed', 'failed')).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 0,
    });
  });

  it('BULKORDER_ORDERS_PER_JOB=1: a chunk job of one per order, the same path: a 503 retried, a 422 dead-lettered, each sent until it ends and stored once', async () => {
    rig = await deliveryRig(
      'per-one',
      {
        faults: {
          script: [
            {
              path: 'orders',
              status: 503,
              headers: { 'retry-after': '0' },
              body: { code: 'MAINTENANCE', message: 'x' },
            },
          ],
        },
      },
      { BULKORDER_ORDERS_PER_JOB: '1' },
    );
    const rows = [HEADER, orderRow('ONE-1'), orderRow('ONE-BAD', 5999), orderRow('ONE-2'), orderRow('ONE-3')];
    const imported = await rig.importFile(await rig.writeFile('one.csv', rows.join('\n') + '\n'));
    expect(imported.counts).toMatchObject({ valid: 4, enqueued: 4 });
    const jobs = await rig.services.queue.getJobs(['waiting']);
    expect(jobs.map((job) => job.id).sort()).toEqual([1, 2, 3, 4].map((n) => chunkJobId(imported.batchId, n)));
    expect(jobs.every((job) => job.name === DELIVER_ORDERS && job.data.records.length === 1)).toBe(true);
    // Each entry names its chunk of one.
    for (const [key, entry] of await ledgerEntries(rig))
      expect(entry.chunkId, key).toMatch(new RegExp(`^${imported.batchId}\\.[1-4]$`));

    await rig.startWorker({ concurrency: 2 });
    const batch = await settle(rig, imported.batchId);
    expect(batch).toMatchObject({ enqueued: 4, delivered: 3, dead: 1, held: 0 });
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(3);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(counters.apiRequests.business).toBe(5); // four orders, one of them twice (its 503)
    expect(counters.statuses['422']).toBe(1);
  });

  it('a dead letter retried while its chunk job still holds it is sent once, by its own job; the chunk, run first, finds it moved', async () => {
    rig = await deliveryRig(
      'chunk-dl',
      {
        faults: {
          // One worker slot: the chunk's records go one at a time, so the first is refused and the second answered 503.
          script: [
            {
              path: 'orders',
              status: 422,
              body: { code: 'PRODUCT_UNKNOWN', message: 'product 5001 is not in the catalogue' },
            },
            {
              path: 'orders',
              status: 503,
              headers: { 'retry-after': '0' },
              body: { code: 'MAINTENANCE', message: 'back soon' },
            },
          ],
        },
      },
      // A canary of one order: the refusal is judged at once (a batch of 5 would otherwise be its own canary, and
      // its refused order would wait for the 503'd one's 30 s backoff before being dead-lettered).
      { BULKORDER_ORDERS_PER_JOB: '5', ...CANARY_OF_ONE },
    );
    const file = await rig.writeFile('dl.csv', ordersCsv('DL', 5));
    const imported = await rig.importFile(file);
    expect(imported.counts).toMatchObject({ valid: 5, enqueued: 5 });
    const chunkId = chunkJobId(imported.batchId, 1);
    const queue = rig.services.queue;
    // The chunk waits 15 to 30 s after its first attempt (it is promoted by hand below).
    const worker = await rig.startWorker({ concurrency: 1, backoff: { baseMs: 30_000, maxMs: 30_000 } });
    const started: string[] = [];
    worker.worker.on('active', (job) => started.push(job.id ?? ''));

    await waitFor(async () => (await deadStore(rig!).count()) === 1, 'the refused order dead-lettered');
    await waitFor(
      async () => (await queue.getJobState(chunkId)) === 'delayed',
      'the chunk waiting for its second attempt',
    );
    const [deadItem] = await deadStore(rig).select();
    const deadKey = deadItem!.record.key;
    expect(deadItem!.record).toMatchObject({ batchId: imported.batchId, httpStatus: 422, attempts: 1 });
    expect(deadItem!.entry).toMatchObject({ state: 'dead', chunkId });
    expect(rig.simulator.counters().ordersAccepted).toBe(3);

    // The chunk's next attempt goes first: it is in the queue before the retry's job, which one slot takes in order.
    await worker.worker.pause();
    await (await queue.getJob(chunkId))!.promote();
    const [retried] = await retryDeadLetters([deadItem!], rig.services.pipeline(rig.logger));
    expect(retried!.counts).toMatchObject({ orders: 1, enqueued: 1 });
    expect((await queue.getJob(chunkId))?.data).toMatchObject({
      records: expect.arrayContaining([expect.objectContaining({ key: deadKey })]),
    });
    const requeued = await rig.services.ledger.get(deadKey);
    // Its own job: a chunk of one of the retry's batch, which its entry names now.
    expect(requeued).toMatchObject({ state: 'queued', batchId: retried!.batchId });
    const ownJob = requeued!.chunkId!;
    expect(ownJob.startsWith(`${retried!.batchId}.`)).toBe(true);
    expect((await queue.getJobs(['waiting'])).map((job) => job.id).sort()).toEqual([chunkId, ownJob].sort());
    started.length = 0;
    void worker.worker.resume();

    const again = await settle(rig, retried!.batchId, 15_000);
    expect(again).toMatchObject({ enqueued: 1, delivered: 1, dead: 0, held: 0 });
    const original = await settle(rig, imported.batchId, 15_000);
    // The chunk's second attempt sent only the 503 record; the retried one was its own job's, and its delivery
    // closed the dead letter where it was counted (resolved). A 503 with Retry-After leaves no possible duplicate.
    expect(original).toMatchObject({ enqueued: 5, delivered: 4, dead: 0, resolved: 1, held: 0, possibleDuplicates: 0 });
    expect(started).toEqual([chunkId, ownJob]);

    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(5);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(counters.apiRequests.business).toBe(5 + 2); // five deliveries, the 422 and the 503
    expect(await rig.services.ledger.get(deadKey)).toMatchObject({
      state: 'delivered',
      batchId: retried!.batchId,
      attempts: 2,
    });
    expect(await deadStore(rig).count()).toBe(0);
    await waitFor(async () => (await queue.getJobState(chunkId)) === 'unknown', 'the chunk job completed and removed');
  }, 60_000);

  it("a dead importer's reserved chunks: the reconciler adds the missing jobs and confirms the added one, closes the batch, and a worker delivers each order once", async () => {
    rig = await deliveryRig('chunk-rec', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('night.csv', ordersCsv('REC', 25));
    // The dead importer, step by step: batch created, 25 orders reserved in 3 chunks with their
    // jobs kept, only the first chunk's job added, none confirmed; then its heartbeat stops.
    const source = await openOrderSource(file, {});
    const orders: ValidOrder[] = [];
    for await (const item of source.items()) if (item.kind === 'valid') orders.push(item);
    expect(orders).toHaveLength(25);
    const deadBatch = newBatchId();
    const { batches, ledger, queue, keys } = rig.services;
    await batches.create({
      id: deadBatch,
      file,
      sha256: '',
      env: rig.config.env,
      columns: source.columns,
    });
    const groups = [orders.slice(0, 10), orders.slice(10, 20), orders.slice(20)];
    const ids = groups.map((_, c) => chunkJobId(deadBatch, c + 1));
    const records = groups.map((group) => group.map((order) => toChunkRecord(order, source.columns, ORDERS)));
    const reserved = await ledger.reserveChunks(
      groups.map((group, c) =>
        group.map((order, i) => ({
          orderKey: order.key,
          fingerprint: fingerprintOf(order.payload),
          record: records[c]![i],
        })),
      ),
      ids,
      { name: DELIVER_ORDERS, layout: ORDERS.payloadCodec!.version },
      { batchId: deadBatch },
    );
    expect(reserved.flat().every((r) => r.outcome === 'reserved')).toBe(true);
    await queue.add(DELIVER_ORDERS, chunkJob(deadBatch, records[0]!, ORDERS.payloadCodec!.version), {
      ...rig.services.jobOptions,
      jobId: ids[0]!,
    });
    await rig.services.redis.del(keys.batchOwner(deadBatch)); // its heartbeat lapsed
    expect(await batches.get(deadBatch)).toMatchObject({ importState: 'importing', enqueued: 0 });

    const deps = { ledger, batches, queue, jobOptions: rig.services.jobOptions, logger: rig.logger };
    const later = Date.now() + 5_000; // past the reconciler's grace for young reservations
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 15, confirmed: 10, closed: [deadBatch], held: 0 });
    expect(await batches.get(deadBatch)).toMatchObject({ importState: 'interrupted', enqueued: 25 });
    const jobs = await queue.getJobs(['waiting']);
    expect(jobs.map((job) => job.id).sort()).toEqual([...ids].sort());
    expect(await rig.services.redis.hlen(keys.unqueuedJobs)).toBe(0);
    expect(await rig.services.redis.zcard(keys.unqueued)).toBe(0);
    // Run again (another worker's reconciler): nothing more to add or count.
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 0, confirmed: 0, closed: [], held: 0 });

    await rig.startWorker({ concurrency: 8 });
    const batch = await settle(rig, deadBatch);
    expect(batch).toMatchObject({ importState: 'interrupted', enqueued: 25, delivered: 25, dead: 0, held: 0 });
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(25);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(counters.apiRequests.business).toBe(25);
    const entries = await ledger.getMany(orders.map((order) => order.key));
    expect(
      entries.every((entry) => entry?.state === 'delivered' && entry.attempts === 1 && entry.batchId === deadBatch),
    ).toBe(true);

    // A re-run of the file finds everything delivered.
    const rerun = await rig.importFile(file);
    expect(rerun.counts).toMatchObject({ valid: 25, enqueued: 0, skippedDelivered: 25 });
  });

  it("an earlier release's job of one order that finds its order queued in a chunk job since sends nothing", async () => {
    rig = await deliveryRig('moved', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('moved.csv', ordersCsv('MV', 1));
    const imported = await rig.importFile(file);
    const chunkId = chunkJobId(imported.batchId, 1);
    const chunk = (await rig.services.queue.getJob(chunkId))!;
    const record = readJob(chunk.data, chunkId, ORDERS.payloadCodec).chunk.records[0]!;
    // A job of one for the same order as releases before chunks only queued it (its key as id; one
    // left from before the upgrade, say), and the chunk job gone: only it runs.
    await chunk.remove();
    await rig.services.redis
      .multi()
      .hset(rig.services.keys.job(ORDERS_QUEUE, record.key), {
        name: 'deliver-order',
        data: JSON.stringify({ v: 2, ...record, batchId: imported.batchId }),
        opts: JSON.stringify({ jobId: record.key, attempts: 5, backoff: { type: 'bulkorder' } }),
        timestamp: Date.now(),
        delay: 0,
        priority: 0,
      })
      .lpush(rig.services.keys.job(ORDERS_QUEUE, 'wait'), record.key)
      .zadd(rig.services.keys.job(ORDERS_QUEUE, 'marker'), 0, '0')
      .exec();
    await rig.startWorker({ concurrency: 2 });
    await waitFor(
      async () =>
        Object.values(await rig!.services.queue.getJobCounts('waiting', 'active', 'delayed')).every((n) => n === 0),
      'the job of one order to end',
    );
    expect(rig.simulator.counters().ordersAccepted).toBe(0);
    expect(await rig.services.ledger.get(record.key)).toMatchObject({ state: 'queued', chunkId });
  });

  it('a chunk job BullMQ failed for good: parkOrphan holds the record it was sending, dead-letters the one still queued, and leaves alone the delivered one and the one queued in another job', async () => {
    rig = await deliveryRig('orphan', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('orphan.csv', ordersCsv('OR', 4));
    const imported = await rig.importFile(file);
    const chunkId = chunkJobId(imported.batchId, 1);
    const job = (await rig.services.queue.getJob(chunkId))!;
    const [sending, delivered, moved, queued] = (job.data as { records: StoredChunkRecord[] }).records.map(
      (r) => r.key,
    ) as [string, string, string, string];
    const { ledger } = rig.services;
    const settleAs = async (key: string, state: 'delivered' | 'dead') => {
      await ledger.claimMany([key], `t-${key}`, chunkId);
      await ledger.settleMany([
        {
          orderKey: key,
          batchId: imported.batchId,
          token: `t-${key}`,
          state,
          ...(state === 'delivered'
            ? { remoteId: 'r-1', httpStatus: 201 }
            : { code: 'PRODUCT_UNKNOWN', parkedRecord: {} }),
        },
      ]);
    };
    await ledger.claimMany([sending], 't-sending', chunkId);
    await settleAs(delivered, 'delivered');
    await settleAs(moved, 'dead');
    // Sent again from the dead letters: a chunk of one of its own, in another batch.
    const again = { v: 2, batchId: 'b-other', records: [{ key: moved, lines: [4], payload: {} }] };
    expect(
      await ledger.reserveRequeued([{ id: 'b-other.r1', data: again }], { name: DELIVER_ORDERS }, 'b-other'),
    ).toEqual([{ outcome: 'reserved' }]);

    // Stalled out: its workers died holding it once more than BULKORDER_MAX_STALLS allows (BullMQ's deferred failure).
    job.deferredFailure = 'job stalled more than allowable limit';
    await parkOrphan(job, new Error('job stalled more than allowable limit'), {
      ledger,
      logger: rig.logger,
      noun: 'order',
      batchFile: async () => file,
      codec: ORDERS.payloadCodec,
    });

    const entries = await ledger.getMany([sending, delivered, moved, queued]);
    expect(entries.map((e) => e?.state)).toEqual(['held', 'delivered', 'queued', 'dead']);
    expect(entries[0]).toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    expect(entries[2]).toMatchObject({ batchId: 'b-other' });
    expect(entries[3]).toMatchObject({ code: 'JOB_FAILED' });
    // The dead letter holds the order as it was imported: its payload unpacked, its file and line.
    const dead = JSON.parse((await rig.services.redis.get(rig.services.keys.parked('dead', queued)))!) as ParkedRecord;
    expect(dead).toMatchObject({ key: queued, batchId: imported.batchId, file, lines: [5], code: 'JOB_FAILED' });
    expect(dead.reason).toMatch(/the workers holding it died more often than BULKORDER_MAX_STALLS allows/);
    expect(dead.payload.products).toEqual([{ productId: 5001, quantity: 1 }]);
    expect(await rig.services.redis.exists(rig.services.keys.parked('held', sending))).toBe(1);
  });

  it("an earlier release's job of one order that BullMQ failed for good is parked as a chunk of one: its entry names no chunk", async () => {
    rig = await deliveryRig('orphan-one', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('one.csv', ordersCsv('OO', 1));
    const imported = await rig.importFile(file);
    const chunkId = chunkJobId(imported.batchId, 1);
    const chunk = (await rig.services.queue.getJob(chunkId))!;
    const record = readJob(chunk.data, chunkId, ORDERS.payloadCodec).chunk.records[0]!;
    await chunk.remove();
    // As the release before left it: queued by its batch in a job of its own (its key as id), no chunk named.
    const { redis, keys, ledger } = rig.services;
    await redis.hdel(keys.ledger(record.key), 'q');
    await rig.services.queue.add('deliver-order', { v: 2, ...record, batchId: imported.batchId } as never, {
      ...rig.services.jobOptions,
      jobId: record.key,
    });
    const job = (await rig.services.queue.getJob(record.key))!;
    job.attemptsMade = job.opts.attempts ?? 1; // its last attempt failed outside the delivery logic
    const parked = await parkOrphan(job, new Error('boom'), {
      ledger,
      logger: rig.logger,
      noun: 'order',
      batchFile: async () => file,
    });
    expect(parked).toEqual(['dead']);
    expect(await ledger.get(record.key)).toMatchObject({
      state: 'dead',
      code: 'JOB_FAILED',
      batchId: imported.batchId,
    });
    const dead = JSON.parse((await redis.get(keys.parked('dead', record.key)))!) as ParkedRecord;
    expect(dead).toMatchObject({ key: record.key, file, lines: [2], code: 'JOB_FAILED' });
  });

  it('while a shared rate is in force, a retried chunk paces only the records it may still send (9 of 10 finished: one slot taken, not ten)', async () => {
    rig = await deliveryRig('paceleft', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('left.csv', ordersCsv('PL', 10));
    const imported = await rig.importFile(file);
    const chunkId = chunkJobId(imported.batchId, 1);
    const keys = [...(await ledgerEntries(rig)).keys()].sort();
    // An earlier attempt of the chunk delivered nine of its ten records (as one cut short by a 429 does).
    const done = keys.slice(0, 9);
    const claim = await rig.services.ledger.claimMany(done, 'earlier', chunkId);
    expect(claim).toMatchObject({ outcome: 'claims' });
    await rig.services.ledger.settleMany(
      done.map((orderKey) => ({ orderKey, batchId: imported.batchId, token: 'earlier', state: 'delivered' as const })),
    );
    // A rate in force (as after a 429): 10/s, each slot taken adds 2/10 to it (BULKORDER_RATE_INCREASE 2).
    await rig.services.redis.hset(rig.services.keys.rate, 'rate', '10', 'nextAt', '0');
    await rig.startWorker({ concurrency: 20 });
    const batch = await settle(rig, imported.batchId);
    expect(batch).toMatchObject({ delivered: 10, dead: 0, held: 0 });
    expect(rig.simulator.counters().ordersAccepted).toBe(1);
    // One slot taken: 10 + 1 x 2 / 10. Pacing the whole chunk took ten (12), and ten slots' time no request used.
    expect(await rig.services.redis.hget(rig.services.keys.rate, 'rate')).toBe('10.2');
  });

  it('a canary whose records ended unheard (held when their worker died mid-send) still gives its verdict: the rest of the batch is delivered', async () => {
    rig = await deliveryRig('silent-canary', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const imported = await rig.importFile(await rig.writeFile('silent.csv', ordersCsv('SC', 30)));
    const { ledger, redis, keys, queue } = rig.services;
    // The canary's twenty (the first two chunks) were granted and claimed, then their worker was SIGKILLed:
    // the reconciler held them (OUTCOME_UNKNOWN), which tells the canary nothing.
    for (const n of [1, 2]) {
      const chunkId = chunkJobId(imported.batchId, n);
      const job = (await queue.getJob(chunkId))!;
      const canaryKeys = (job.data as { records: StoredChunkRecord[] }).records.map((r) => r.key);
      await redis.sadd(keys.batchCanaryGranted(imported.batchId), ...canaryKeys);
      await ledger.claimMany(canaryKeys, 'killed', chunkId);
      await ledger.settleMany(
        canaryKeys.map((orderKey) => ({
          orderKey,
          batchId: imported.batchId,
          token: 'killed',
          state: 'held' as const,
          code: 'OUTCOME_UNKNOWN',
          parkedRecord: {},
        })),
      );
    }
    await rig.startWorker();
    const batch = await settle(rig, imported.batchId);
    expect(batch).toMatchObject({ delivered: 10, held: 20, dead: 0 });
    expect(rig.simulator.counters().ordersAccepted).toBe(10);
    expect(await redis.hget(keys.batchCircuit(imported.batchId), 'state')).toBe('flowing');
  });
});
