import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { PutBackChunks, putBackJob, wakeIfFree } from '../../src/batches/putBackChunks.js';
import { wakeBatchJobs } from '../../src/batches/wakeBatch.js';
import { followBatch } from '../../src/batches/followBatch.js';
import { bullmq } from '../../src/cjsPackages.js';
import type { ChunkJobData } from '../../src/deliveryJob.js';
import { NEWEST_PACKED_LAYOUT } from '../../src/ingest/packedLayouts.js';
import { chunkJobId } from '../../src/queues.js';
import { actOnBatch } from '../../src/services/batchControl.js';
import { waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv, settleBatch, type DeliveryRig } from '../helpers/deliveryRig.js';
import { monitorRedis } from '../helpers/monitorRedis.js';
import { TEST_REDIS_URL, testRedis } from '../helpers/redis.js';

/**
 * Chunks a worker put back (their batch's file was still read, its canary judged, or it was held)
 * rest delayed; once that is over they are promoted, not left to wait out their rest: the end of an
 * import, a canary that passed, a person's release or cancel. Real Redis and BullMQ, no delivering
 * worker: a chunk is taken as a worker takes it and put back as the worker's processor puts it back
 * (putBackJob), and the jobs' states are read from BullMQ.
 */
let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/**
 * Takes the queue's next job (as a worker does; it must be `batchId`'s chunk `n`) and puts it back
 * for a minute, as the processor does when the batch's circuit says wait.
 */
async function putBack(r: DeliveryRig, batchId: string, n = 1): Promise<string> {
  const { queue } = r.services;
  const id = chunkJobId(batchId, n);
  const connection = testRedis();
  const taker = new (bullmq().Worker)(queue.name, null, { connection, prefix: queue.opts.prefix ?? '' });
  try {
    const token = randomUUID();
    const job = (await taker.getNextJob(token, { block: false })) as Job | undefined;
    expect(job?.id).toBe(id);
    await putBackJob(job!, Date.now() + 60_000, token, new PutBackChunks(r.services.redis, r.services.keys));
    expect(await job!.getState()).toBe('delayed');
  } finally {
    await taker.close();
    connection.disconnect();
  }
  return id;
}

describe("waking a batch's delayed chunks", () => {
  it("promotes this batch's delayed chunks and no other batch's", async () => {
    rig = await deliveryRig('wake-batch', {}, { BULKORDER_ORDERS_PER_JOB: '2' });
    // The other batch first: its chunk is the first a worker takes.
    const other = await rig.importFile(await rig.writeFile('other.csv', ordersCsv('OT', 2)));
    const mine = await rig.importFile(await rig.writeFile('mine.csv', ordersCsv('MI', 4)));
    const { queue, redis, keys } = rig.services;
    const putBacks = new PutBackChunks(redis, keys);
    const otherJob = await putBack(rig, other.batchId);
    const mineJob = await putBack(rig, mine.batchId);

    expect(await wakeBatchJobs(queue, putBacks, mine.batchId)).toBe(1);
    expect(await (await queue.getJob(mineJob))!.getState()).toBe('waiting');
    expect(await (await queue.getJob(otherJob))!.getState()).toBe('delayed');
    // Nothing left to wake: a second call promotes nothing, and the promoted job left the batch's set.
    expect(await wakeBatchJobs(queue, putBacks, mine.batchId)).toBe(0);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 2, delayed: 1 });
    expect(await putBacks.read(mine.batchId)).toEqual([]);
    expect(await putBacks.read(other.batchId)).toEqual([otherJob]);
    // Kept as long as the batch (the batch's TTL read first: both count down meanwhile). The script copies the TTL
    // it read (PTTL, then PEXPIRE): a millisecond may tick between the two, so the set may outlive the batch by a few.
    const batchTtl = await redis.pttl(keys.batch(other.batchId));
    const setTtl = await redis.pttl(keys.batchPutBack(other.batchId));
    expect(setTtl).toBeGreaterThan(0);
    expect(setTtl).toBeLessThanOrEqual(batchTtl + 10);
  });

  it("a wake reads its batch's put-back jobs only, never the queue's delayed set: others' jobs are neither read nor promoted", async () => {
    rig = await deliveryRig('wake-exact', {}, { BULKORDER_ORDERS_PER_JOB: '1' });
    const OTHERS = 30;
    const others = await rig.importFile(await rig.writeFile('others.csv', ordersCsv('OT', OTHERS)));
    const mine = await rig.importFile(await rig.writeFile('mine.csv', ordersCsv('MI', 2)));
    const { queue, redis, keys } = rig.services;
    const putBacks = new PutBackChunks(redis, keys);
    for (let n = 1; n <= OTHERS; n++) await putBack(rig, others.batchId, n);
    const mineJobs = [await putBack(rig, mine.batchId, 1), await putBack(rig, mine.batchId, 2)];
    expect(await queue.getDelayedCount()).toBe(OTHERS + 2);

    // Every command Redis runs on this test's keys while the wake runs (MONITOR: scripts' calls too).
    const seen: string[][] = [];
    const fence = (name: string) => `${keys.prefix}:fence:${name}`;
    const monitor = await monitorRedis(TEST_REDIS_URL, (args) => {
      if (args.some((arg) => arg.startsWith(keys.prefix))) seen.push(args);
    });
    const sawFence = (name: string) => seen.some((args) => args.includes(fence(name)));
    try {
      await redis.get(fence('start'));
      await waitUntil(() => sawFence('start'));
      expect(await wakeBatchJobs(queue, putBacks, mine.batchId)).toBe(2);
      await redis.get(fence('end'));
      await waitUntil(() => sawFence('end'));
    } finally {
      monitor.close();
    }
    const during = seen.slice(
      seen.findIndex((args) => args.includes(fence('start'))) + 1,
      seen.findIndex((args) => args.includes(fence('end'))),
    );
    const report = JSON.stringify(during.map((args) => args.map((arg) => arg.slice(0, 120))));
    const delayedKey = queue.toKey('delayed');
    // No read of the delayed set's members (a range or scan); BullMQ's promote removes each one job from it.
    expect(
      during.filter((args) => args.includes(delayedKey) && /^(z(rev)?range|zscan)/i.test(args[0] ?? '')),
      report,
    ).toEqual([]);
    // Nothing of the other batch named, and of jobs only this batch's two read (getJob: HGETALL).
    expect(
      during.filter((args) => args.some((arg) => arg.includes(others.batchId))),
      report,
    ).toEqual([]);
    const jobsRead = during.filter((args) => /^hgetall$/i.test(args[0] ?? '')).map((args) => args[1]);
    expect(jobsRead.sort(), report).toEqual(mineJobs.map((id) => queue.toKey(id)).sort());

    for (const id of mineJobs) expect(await (await queue.getJob(id))!.getState()).toBe('waiting');
    expect(await queue.getDelayedCount()).toBe(OTHERS);
    expect(await putBacks.read(mine.batchId)).toEqual([]);
    expect((await putBacks.read(others.batchId)).length).toBe(OTHERS);
  });

  it("a delivery worker notes each chunk it puts back in the chunk's batch; the id leaves once the job is woken or completes", async () => {
    rig = await deliveryRig('wake-worker', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const woken = await rig.importFile(await rig.writeFile('woken.csv', ordersCsv('WK', 3)));
    const promoted = await rig.importFile(await rig.writeFile('promoted.csv', ordersCsv('PR', 3)));
    const { queue, redis, keys } = rig.services;
    const putBacks = new PutBackChunks(redis, keys);
    // Written by a newer bulkorder (a packed layout this worker lacks): the worker puts each back for a minute.
    const chunks = await Promise.all(
      [woken, promoted].map(async ({ batchId }) => (await queue.getJob(chunkJobId(batchId, 1))) as Job<ChunkJobData>),
    );
    const originals = chunks.map((chunk) => chunk.data);
    for (const chunk of chunks) await chunk.updateData({ ...chunk.data, pk: NEWEST_PACKED_LAYOUT + 1 });
    await rig.startWorker({ concurrency: 2 });
    await waitFor(
      async () => (await queue.getDelayedCount()) === 2 && (await putBacks.read(promoted.batchId)).length === 1,
      'both chunks put back',
      20_000,
    );
    expect(await putBacks.read(woken.batchId)).toEqual([chunks[0]!.id]);
    expect(await putBacks.read(promoted.batchId)).toEqual([chunks[1]!.id]);

    // Readable again (a newer worker came): one batch woken, the other's chunk promoted by hand (Bull Board).
    for (const [i, chunk] of chunks.entries()) await chunk.updateData(originals[i]!);
    expect(await wakeBatchJobs(queue, putBacks, woken.batchId)).toBe(1);
    expect(await putBacks.read(woken.batchId)).toEqual([]);
    await (await queue.getJob(chunks[1]!.id!))!.promote();
    for (const { batchId } of [woken, promoted]) {
      const { batch, settled } = await followBatch(rig.services.batches, batchId, {
        pollMs: 50,
        timeoutMs: 60_000,
        out: { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream,
      });
      expect(settled, JSON.stringify(batch)).toBe(true);
      expect(batch).toMatchObject({ enqueued: 3, delivered: 3, dead: 0, held: 0 });
    }
    expect(rig.simulator.counters().ordersAccepted).toBe(6);
    // The promoted job's id left its batch's set when the job completed.
    await waitFor(
      async () => (await putBacks.read(promoted.batchId)).length === 0,
      'the completed job dropped',
      20_000,
    );
  }, 150_000);

  it("a worker's chunks its batch's canary keeps back wait in place, holding no request slot: none is put back, every order goes once", async () => {
    // A canary of 2 chunks; 20 request slots take 10 chunks of 2 at once, and the API's latency keeps the
    // canary judging while the other eight ask: they wait in place (one look at the batch), none rests delayed.
    rig = await deliveryRig(
      'wait-in-place',
      { faults: { latencyMs: 150 } },
      {
        BULKORDER_ORDERS_PER_JOB: '2',
        BULKORDER_CANARY_ORDERS: '4',
      },
    );
    const batch = await rig.importFile(await rig.writeFile('in-place.csv', ordersCsv('IP', 60)));
    const { keys } = rig.services;
    const putBackKey = keys.batchPutBack(batch.batchId);
    const batchKey = keys.batch(batch.batchId);
    let putBacks = 0;
    let looks = 0;
    const monitor = await monitorRedis(TEST_REDIS_URL, (args) => {
      // Noting a put-back (notePutBack-2.lua and its SADD); the canary's wake reads the set (SMEMBERS): no put-back.
      if (args.includes(putBackKey) && !/^smembers$/i.test(args[0] ?? '')) putBacks++;
      if (/^hmget$/i.test(args[0] ?? '') && args[1] === batchKey && args[2] === 'importState') looks++;
    });
    try {
      await rig.startWorker({ concurrency: 20 });
      expect(await settleBatch(rig, batch.batchId)).toMatchObject({ enqueued: 60, delivered: 60, dead: 0, held: 0 });
    } finally {
      monitor.close();
    }
    expect(rig.simulator.counters().ordersAccepted).toBe(60);
    expect(looks).toBeGreaterThan(0);
    expect(putBacks).toBe(0);
  });

  it('a worker stopped while its chunks wait in place sends none of them; they rest, and the next worker delivers every order once', async () => {
    // The canary's 4 orders take 1.5 s at the API: the other chunks the worker took wait in place when it is told to stop.
    rig = await deliveryRig(
      'wait-in-place-stop',
      { faults: { latencyMs: 1500 } },
      {
        BULKORDER_ORDERS_PER_JOB: '2',
        BULKORDER_CANARY_ORDERS: '4',
      },
    );
    const batch = await rig.importFile(await rig.writeFile('stopped.csv', ordersCsv('SP', 40)));
    const batchKey = rig.services.keys.batch(batch.batchId);
    let looks = 0;
    const monitor = await monitorRedis(TEST_REDIS_URL, (args) => {
      if (/^hmget$/i.test(args[0] ?? '') && args[1] === batchKey && args[2] === 'importState') looks++;
    });
    try {
      const first = await rig.startWorker({ concurrency: 20 });
      await waitFor(async () => looks > 0, 'chunks waiting in place', 30_000);
      await first.close();
    } finally {
      monitor.close();
    }
    // Only the canary went (its requests were in flight: the worker lets them finish).
    expect(rig.simulator.counters().ordersAccepted).toBeLessThanOrEqual(4);
    await rig.startWorker({ concurrency: 20 });
    expect(await settleBatch(rig, batch.batchId)).toMatchObject({ enqueued: 40, delivered: 40, dead: 0, held: 0 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 40, duplicateOrdersAccepted: 0 });
  }, 120_000);

  it("a chunk put back while its batch's file was read wakes itself once the read has ended (the import's wake came before it rested), and rests while the read goes on", async () => {
    rig = await deliveryRig('wake-if-read', {}, { BULKORDER_ORDERS_PER_JOB: '2' });
    const reading = await rig.importFile(await rig.writeFile('reading.csv', ordersCsv('RD', 2)));
    const read = await rig.importFile(await rig.writeFile('read.csv', ordersCsv('RE', 2)));
    const { queue, redis, keys } = rig.services;
    // The workers' canary is 2 orders: the 2 queued are a whole one.
    const putBacks = new PutBackChunks(redis, keys, 2);
    // As a worker's processor does when batchGate says `read`: put back, then woken unless the read goes on.
    await redis.hset(keys.batch(reading.batchId), 'importState', 'importing');
    await redis.hdel(keys.batch(reading.batchId), 'readAt');
    const restingId = await putBack(rig, reading.batchId);
    const resting = (await queue.getJob(restingId))!;
    await wakeIfFree(resting, putBacks, 'read');
    expect(await resting.getState()).toBe('delayed');
    expect(await putBacks.read(reading.batchId)).toEqual([restingId]);
    // Read to its end while its import still queues: it rests until a whole canary (the workers') is queued.
    await redis.hset(keys.batch(reading.batchId), 'readAt', Date.now());
    await wakeIfFree(resting, new PutBackChunks(redis, keys, 3), 'read');
    expect(await resting.getState()).toBe('delayed');
    await wakeIfFree(resting, putBacks, 'read');
    expect(await resting.getState()).toBe('waiting');

    const wokenId = await putBack(rig, read.batchId);
    const woken = (await queue.getJob(wokenId))!;
    await wakeIfFree(woken, putBacks, 'read');
    expect(await woken.getState()).toBe('waiting');
    // Twice (the import's wake promoted it meanwhile): nothing happens, nothing is thrown.
    await wakeIfFree(woken, putBacks, 'read');
    expect(await woken.getState()).toBe('waiting');
  });

  it("a chunk put back while its batch's canary judged it wakes itself once the batch flows (the canary's wake came before it rested), and rests while the batch is judged or held", async () => {
    rig = await deliveryRig('wake-if-passed', {}, { BULKORDER_ORDERS_PER_JOB: '2' });
    const judged = await rig.importFile(await rig.writeFile('judged.csv', ordersCsv('JU', 2)));
    const passed = await rig.importFile(await rig.writeFile('passed.csv', ordersCsv('PA', 2)));
    const { queue, redis, keys } = rig.services;
    const putBacks = new PutBackChunks(redis, keys);
    // As a worker's processor does when batchGate says `wait`: put back, then woken unless the batch is still judged.
    const restingId = await putBack(rig, judged.batchId);
    const resting = (await queue.getJob(restingId))!;
    // No circuit yet (the gate starts it as canary), then canary, then held: it rests each time.
    for (const state of [undefined, 'canary', 'held']) {
      if (state !== undefined) await redis.hset(keys.batchCircuit(judged.batchId), 'state', state);
      await wakeIfFree(resting, putBacks, 'judged');
      expect(await resting.getState(), `circuit ${state ?? 'not started'}`).toBe('delayed');
    }
    // A file still read keeps it back whatever its circuit says.
    await redis.hset(keys.batch(judged.batchId), 'importState', 'importing');
    await redis.hset(keys.batchCircuit(judged.batchId), 'state', 'flowing');
    await wakeIfFree(resting, putBacks, 'judged');
    expect(await resting.getState()).toBe('delayed');

    const wokenId = await putBack(rig, passed.batchId);
    const woken = (await queue.getJob(wokenId))!;
    await redis.hset(keys.batchCircuit(passed.batchId), 'state', 'flowing');
    await wakeIfFree(woken, putBacks, 'judged');
    expect(await woken.getState()).toBe('waiting');
    expect(await resting.getState()).toBe('delayed');
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

/** Polls until `done` (the monitor's stream lags the commands a little). */
async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(done()).toBe(true);
}
