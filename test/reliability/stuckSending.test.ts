import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { isSettled } from '../../src/batches/batchStore.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import { reconcileImports, STUCK_SENDING_MS } from '../../src/importer/reconcileImports.js';
import { chunkJobId } from '../../src/queues.js';
import { keptNothingText, releaseHeld } from '../../src/review/releaseHeld.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

/**
 * Issue 37, "no stuck order": a ledger entry left `sending` by a worker that died mid-send, whose
 * job is then gone, is held for review by a reconciler (never waited on for ever, never resent),
 * and its batch settles; an entry that vanished while its job waits is never sent (never read as
 * "moved"). Real Redis, real BullMQ, the simulator; states made through the ledger's own API.
 */
let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

describe('claims left sending without a live job', () => {
  it('are held as OUTCOME_UNKNOWN by the reconciler, the batch settles, and nothing is sent', async () => {
    rig = await deliveryRig('stuck-sending', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('stuck.csv', ordersCsv('ST', 4));
    const imported = await rig.importFile(file);
    const { ledger, queue, batches } = rig.services;
    const chunkId = chunkJobId(imported.batchId, 1);
    const job = (await queue.getJob(chunkId))!;
    const orderKeys = (await rig.services.redis.keys(rig.services.keys.ledger('*'))).map((key) =>
      key.slice(rig!.services.keys.ledger('').length),
    );
    expect(orderKeys).toHaveLength(4);
    // A worker claimed the chunk (its records `sending`), then was SIGKILLed and its job removed.
    const claim = await ledger.claimMany(orderKeys, 'killed-worker-token', chunkId);
    expect(claim.outcome === 'claims' && claim.records.every((r) => r.outcome === 'claimed')).toBe(true);
    const deps = { ledger, batches, queue, jobOptions: rig.services.jobOptions, logger: rig.logger };
    const at = await ledger.now();
    // While the job is there it is alive (BullMQ's stalled check gives it back): nothing held.
    expect((await reconcileImports(deps, at + STUCK_SENDING_MS + 1_000)).held).toBe(0);
    await job.remove();
    // Too young: a claim of a moment ago may be settling now.
    // (the alive claims were moved to the back, at that reconciler's time)
    expect((await reconcileImports(deps, at + STUCK_SENDING_MS + 2_000)).held).toBe(0);
    const report = await reconcileImports(deps, at + 2 * STUCK_SENDING_MS + 2_000);
    expect(report.held).toBe(4);
    const entries = await ledger.getMany(orderKeys);
    expect(entries.map((entry) => [entry?.state, entry?.code])).toEqual(
      orderKeys.map(() => ['held', 'OUTCOME_UNKNOWN']),
    );
    const held = await new ParkedStore(rig.services.redis, rig.services.keys, ledger, 'held').select();
    expect(held.map((item) => item.record.key).sort()).toEqual([...orderKeys].sort());
    expect(await rig.services.redis.zcard(rig.services.keys.sending)).toBe(0);
    const batch = (await batches.get(imported.batchId))!;
    expect(batch).toMatchObject({ enqueued: 4, held: 4, delivered: 0 });
    expect(isSettled(batch)).toBe(true);
    // Another reconciler after it: nothing more.
    expect((await reconcileImports(deps, at + 2 * STUCK_SENDING_MS + 3_000)).held).toBe(0);
    // A worker started now sends nothing of them; a re-run skips them as held.
    await rig.startWorker({ concurrency: 4 });
    const rerun = await rig.importFile(file);
    expect(rerun.counts).toMatchObject({ enqueued: 0 });
    // Their job was gone: nothing of them was kept, so a release queues nothing and says why (never a null sent).
    const release = await releaseHeld(held, { by: 'anna' }, rig.services.pipeline(rig.logger));
    expect(release.made).toEqual([]);
    expect(release.keptNothing.sort()).toEqual([...orderKeys].sort());
    expect(keptNothingText(release.keptNothing, 'order')).toContain('4 held orders not released');
    expect(await ledger.getMany(orderKeys)).toEqual(orderKeys.map(() => expect.objectContaining({ state: 'held' })));
    expect(rig.simulator.counters().ordersAccepted).toBe(0);
    recordReliability({
      fault: 'ledger entries left `sending` by a SIGKILLed worker whose job was then removed',
      behaviour:
        'a reconciler (every worker, every 5 s; import at start and while --wait) holds each claim older than 30 s without a live job as OUTCOME_UNKNOWN; the batch settles; never resent',
      orders: 4,
      lost: 0,
      duplicates: 0,
      held: 4,
    });
  }, 120_000);

  it('held from a job that finished without settling them: the record its job carried is kept, and a release delivers each once', async () => {
    rig = await deliveryRig('stuck-finished', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('finished.csv', ordersCsv('FN', 3));
    const imported = await rig.importFile(file);
    const { ledger, queue, batches } = rig.services;
    const chunkId = chunkJobId(imported.batchId, 1);
    const orderKeys = (await rig.services.redis.keys(rig.services.keys.ledger('*'))).map((key) =>
      key.slice(rig!.services.keys.ledger('').length),
    );
    // A worker claimed the chunk, then its job ended (BullMQ failed it) with nobody to settle or park its records.
    await ledger.claimMany(orderKeys, 'dead-worker-token', chunkId);
    const job = (await queue.getJob(chunkId))!;
    await job.remove();
    await rig.services.redis.hset(queue.toKey(chunkId), {
      data: JSON.stringify(job.data),
      finishedOn: String(Date.now()),
    });
    const deps = {
      ledger,
      batches,
      queue,
      jobOptions: rig.services.jobOptions,
      logger: rig.logger,
      codec: rig.services.kind.payloadCodec,
    };
    const at = await ledger.now();
    expect((await reconcileImports(deps, at + STUCK_SENDING_MS + 1_000)).held).toBe(3);
    const store = new ParkedStore(rig.services.redis, rig.services.keys, ledger, 'held');
    const held = await store.select();
    expect(held).toHaveLength(3);
    for (const { record } of held) {
      expect(record.code).toBe('OUTCOME_UNKNOWN');
      expect(record.payload).toMatchObject({ products: [expect.objectContaining({ quantity: expect.any(Number) })] });
      expect(record.lines).toHaveLength(1);
      expect(record.file).toBe(file);
    }
    // A person found them not on the service: released, each delivered exactly once.
    await rig.startWorker({ concurrency: 4 });
    const release = await releaseHeld(held, { by: 'anna' }, rig.services.pipeline(rig.logger));
    expect(release.keptNothing).toEqual([]);
    const { batch } = await followBatch(batches, release.made[0]!.batchId, {
      pollMs: 100,
      timeoutMs: 60_000,
      out: quiet,
    });
    expect(batch).toMatchObject({ enqueued: 3, delivered: 3 });
    expect(rig.simulator.counters().ordersAccepted).toBe(3);
    expect(rig.simulator.counters().duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault:
        'ledger entries left `sending` by a job that ended without settling or parking them (its worker died in the failed handler)',
      behaviour:
        'the reconciler holds each as OUTCOME_UNKNOWN with the record its job carried (payload, rows, file), so `review release` sends it: each delivered once',
      orders: 3,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 120_000);

  it('an entry that vanished while its job waits is never sent: held with REDIS_KEYS_VANISHED, the batch settles', async () => {
    rig = await deliveryRig('vanished-entry', {}, { BULKORDER_ORDERS_PER_JOB: '10' });
    const file = await rig.writeFile('vanish.csv', ordersCsv('VN', 3));
    const imported = await rig.importFile(file);
    const { ledger } = rig.services;
    const ledgerKeys = await rig.services.redis.keys(rig.services.keys.ledger('*'));
    // One entry evicted (an allkeys-lru Redis under memory pressure does this).
    await rig.services.redis.del(ledgerKeys[0]!);
    await rig.startWorker({ concurrency: 4 });
    const { batch } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 60_000,
      out: quiet,
    });
    // The other two went; the vanished one was held, not sent (it may have been delivered before).
    expect(batch).toMatchObject({ enqueued: 3, delivered: 2, held: 1 });
    expect(rig.simulator.counters().ordersAccepted).toBe(2);
    const vanished = await ledger.get(ledgerKeys[0]!.slice(rig.services.keys.ledger('').length));
    expect(vanished).toMatchObject({ state: 'held', code: 'REDIS_KEYS_VANISHED' });
    // A re-run sends nothing again.
    const rerun = await rig.importFile(file);
    expect(rerun.counts).toMatchObject({ enqueued: 0 });
    expect(rig.simulator.counters().ordersAccepted).toBe(2);
    recordReliability({
      fault: 'a ledger entry vanished (evicted) while its chunk job waited',
      behaviour:
        'claimed as `vanished`, never as "moved": written back and held for review with REDIS_KEYS_VANISHED, never sent; the batch settles; a re-run sends nothing',
      orders: 3,
      lost: 0,
      duplicates: 0,
      held: 1,
    });
  }, 120_000);
});
