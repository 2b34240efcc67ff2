import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyspace, type Keyspace } from '../../src/keyspace.js';
import { Ledger, type ChunkReservation } from '../../src/ledger/ledger.js';
import { fingerprintOf } from '../../src/ledger/fingerprint.js';
import { BatchStore } from '../../src/batches/batchStore.js';
import { JOB_DATA_VERSION, type StoredChunkRecord } from '../../src/deliveryJob.js';
import { chunkJob } from '../../src/ledger/jobData.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';

/**
 * Chunk jobs at the ledger (BULKORDER_ORDERS_PER_JOB): reserveChunk, confirmChunk, claimMany and
 * settleMany (src/lua/scripts/) against real Redis, a fresh prefix per test.
 */

const redis = testRedis();
let prefix: string;
let keys: Keyspace;
let ledger: Ledger;
let batches: BatchStore;

const order = (lastName: string, productId = 5001) => ({
  businessCustomerId: 1001,
  recipient: { lastName, city: 'Utrecht' },
  products: [{ productId, quantity: 1 }],
});
/** A record of a chunk with its content; `record` is what the chunk job's data holds for it. */
const item = (orderKey: string, lastName = orderKey): ChunkReservation => ({
  orderKey,
  fingerprint: fingerprintOf(order(lastName)),
  record: { key: orderKey, lines: [1], payload: order(lastName) },
});

async function newBatch(id: string): Promise<void> {
  await batches.create({
    id,
    file: `${id}.csv`,
    sha256: 'x',
    env: 'acceptance',
    columns: ['a'],
  });
}

/** Reserves one chunk for `batchId` and confirms it (the import's three steps, its job left out). */
async function queuedChunk(chunkId: string, orderKeys: string[], batchId = 'b1'): Promise<void> {
  const [results] = await ledger.reserveChunks(
    [orderKeys.map((key) => item(key))],
    [chunkId],
    { name: 'deliver-orders', layout: undefined },
    { batchId },
  );
  expect(results!.every((r) => r.outcome === 'reserved')).toBe(true);
  expect(await ledger.confirmChunks([{ chunkId, orderKeys }], batchId)).toBe(orderKeys.length);
}

beforeEach(async () => {
  prefix = testPrefix('chunks');
  keys = keyspace(prefix);
  ledger = new Ledger(redis, keys, { queueName: 'orders', staleQueuedMs: 50 });
  batches = new BatchStore(redis, keys, 60_000);
  await newBatch('b1');
});
afterEach(async () => deletePrefix(redis, prefix));
afterAll(() => redis.disconnect());

describe('chunk jobs in the ledger', () => {
  it('reserves a chunk into one kept job holding only the records it took, and reports the ones it left out', async () => {
    await newBatch('b0');
    // Delivered before by b0: `old` with the same content, `reused` with other content than the file has now.
    await queuedChunk('b0.1', ['old', 'reused'], 'b0');
    await ledger.claimMany(['old', 'reused'], 't0', 'b0.1');
    await ledger.settleMany(
      ['old', 'reused'].map((key) => ({
        orderKey: key,
        batchId: 'b0',
        token: 't0',
        state: 'delivered' as const,
        remoteId: `R-${key}`,
        httpStatus: 201,
      })),
    );

    const chunk = [item('n1'), item('old'), item('reused', 'someone else'), item('n2')];
    const allLeftOut = [item('old')];
    const results = await ledger.reserveChunks(
      [chunk, allLeftOut],
      ['b1.1', 'b1.2'],
      { name: 'deliver-orders', layout: undefined },
      { batchId: 'b1' },
    );
    expect(results[0]).toEqual([
      { outcome: 'reserved' },
      { outcome: 'delivered', batchId: 'b0' },
      expect.objectContaining({ outcome: 'conflict', batchId: 'b0', state: 'delivered' }),
      { outcome: 'reserved' },
    ]);
    expect(results[1]).toEqual([{ outcome: 'delivered', batchId: 'b0' }]);

    // One kept job, for the chunk that took something, holding exactly the records it took.
    expect(await redis.hkeys(keys.unqueuedJobs)).toEqual(['b1.1']);
    expect(await redis.zrange(keys.unqueued, '0', '-1')).toEqual(['b1.1']);
    const kept = JSON.parse((await redis.hget(keys.unqueuedJobs, 'b1.1'))!) as {
      name: string;
      data: { batchId: string; records: { key: string }[] };
    };
    // The same data an import adds to BullMQ: chunkJob's (src/ledger/jobData.ts), version and all.
    expect(kept).toEqual({
      name: 'deliver-orders',
      data: chunkJob('b1', [chunk[0]!.record, chunk[3]!.record] as StoredChunkRecord[], undefined),
    });
    expect(kept.data).toMatchObject({ v: JOB_DATA_VERSION });
    expect(await ledger.stranded(Date.now() + 1, 10)).toEqual([
      expect.objectContaining({
        jobId: 'b1.1',
        state: 'queued',
        batchId: 'b1',
        jobExists: false,
        chunkKeys: ['n1', 'n2'],
      }),
    ]);
    const [n1, old, reused] = await ledger.getMany(['n1', 'old', 'reused']);
    expect(n1).toMatchObject({ state: 'queued', batchId: 'b1', chunkId: 'b1.1' });
    // The records left out are untouched.
    expect(old).toMatchObject({ state: 'delivered', batchId: 'b0', chunkId: 'b0.1' });
    expect(reused?.fingerprint).toEqual(fingerprintOf(order('reused')));

    // Confirmed with every key of the chunk: only those it reserved count, and only once.
    const all = chunk.map((c) => c.orderKey);
    expect(await ledger.confirmChunks([{ chunkId: 'b1.1', orderKeys: all }], 'b1')).toBe(2);
    expect(await ledger.confirmChunks([{ chunkId: 'b1.1', orderKeys: all }], 'b1')).toBe(0);
    expect((await batches.get('b1'))?.enqueued).toBe(2);
    expect(await redis.hlen(keys.unqueuedJobs)).toBe(0);
    expect(await redis.zcard(keys.unqueued)).toBe(0);
    expect(await ledger.stranded(Date.now() + 1, 10)).toEqual([]);
  });

  it('a chunk claim finds a record re-reserved into another chunk `moved`, skips its own dead letters, and delivered records give their id', async () => {
    await newBatch('b2');
    await queuedChunk('b1.1', ['k1', 'k2', 'k3', 'k4']);
    // An earlier release's job of one (its key as id, '') may not claim a record queued in a chunk, nor another chunk.
    for (const chunkId of ['', 'b1.9'])
      expect(await ledger.claimMany(['k1'], 'x', chunkId)).toEqual({
        outcome: 'claims',
        trial: false,
        records: [{ outcome: 'moved' }],
      });

    const first = await ledger.claimMany(['k1', 'k2', 'k3', 'k4'], 't1', 'b1.1');
    expect(first).toEqual({
      outcome: 'claims',
      trial: false,
      records: Array(4).fill({ outcome: 'claimed', attempt: 1 }),
    });
    expect(
      await ledger.settleMany([
        { orderKey: 'k1', batchId: 'b1', token: 't1', state: 'delivered', remoteId: 'SIM-1', httpStatus: 201 },
        {
          orderKey: 'k2',
          batchId: 'b1',
          token: 't1',
          state: 'dead',
          httpStatus: 422,
          code: 'PRODUCT_UNKNOWN',
          message: 'no such product',
          parkedRecord: { kind: 'dead', key: 'k2' },
        },
        {
          orderKey: 'k3',
          batchId: 'b1',
          token: 't1',
          state: 'queued',
          httpStatus: 503,
          code: 'HTTP_503',
          message: 'busy',
          answered5xx: true,
        },
        {
          orderKey: 'k4',
          batchId: 'b1',
          token: 't1',
          state: 'dead',
          httpStatus: 422,
          code: 'PRODUCT_UNKNOWN',
          message: 'no such product',
          parkedRecord: { kind: 'dead', key: 'k4' },
        },
      ]),
    ).toEqual(['ok', 'ok', 'ok', 'ok']);

    // `dead-letters retry` of k2 while the chunk waits for its next attempt: a chunk of one of its own in b2.
    const retry = { id: 'b2.r1', data: { v: 2, batchId: 'b2', records: [{ key: 'k2', lines: [1], payload: {} }] } };
    expect(await ledger.reserveRequeued([retry], { name: 'deliver-orders' }, 'b2')).toEqual([{ outcome: 'reserved' }]);
    expect((await ledger.get('k2'))?.chunkId).toBe('b2.r1');

    const second = await ledger.claimMany(['k1', 'k2', 'k3', 'k4'], 't2', 'b1.1');
    expect(second).toEqual({
      outcome: 'claims',
      trial: false,
      records: [
        { outcome: 'delivered', remoteId: 'SIM-1' },
        { outcome: 'moved' },
        { outcome: 'claimed', attempt: 2 },
        { outcome: 'dead' },
      ],
    });
    // The chunk's claim left k2 and k4 as they were; k2's own job claims it.
    expect(await ledger.getMany(['k2', 'k4'])).toEqual([
      expect.objectContaining({ state: 'queued', batchId: 'b2' }),
      expect.objectContaining({ state: 'dead', batchId: 'b1', attempts: 1 }),
    ]);
    expect(await ledger.claimMany(['k2'], 't3', 'b2.r1')).toEqual({
      outcome: 'claims',
      trial: false,
      records: [{ outcome: 'claimed', attempt: 2 }],
    });
  });

  it('half-open, a chunk claim claims one record as the trial and leaves the others `later`; open, it claims nothing', async () => {
    const gate = { key: keys.breaker };
    await queuedChunk('b1.1', ['k0', 'k1', 'k2', 'k3']);
    await ledger.claimMany(['k0'], 't0', 'b1.1');
    await ledger.settleMany([
      { orderKey: 'k0', batchId: 'b1', token: 't0', state: 'delivered', remoteId: 'SIM-0', httpStatus: 201 },
    ]);

    await redis.hset(keys.breaker, { state: 'halfOpen', trialsLeft: 2 });
    const trial = await ledger.claimMany(['k0', 'k1', 'k2', 'k3'], 't1', 'b1.1', gate);
    // The trial is the first record that can be sent (k0 is delivered): one request, one trial spent.
    expect(trial).toEqual({
      outcome: 'claims',
      trial: true,
      records: [
        { outcome: 'delivered', remoteId: 'SIM-0' },
        { outcome: 'claimed', attempt: 1 },
        { outcome: 'later' },
        { outcome: 'later' },
      ],
    });
    expect(await redis.hget(keys.breaker, 'trialsLeft')).toBe('1');
    expect(await ledger.getMany(['k2', 'k3'])).toEqual([
      expect.objectContaining({ state: 'queued', attempts: 0 }),
      expect.objectContaining({ state: 'queued', attempts: 0 }),
    ]);

    await redis.hset(keys.breaker, { trialsLeft: 0 });
    expect(await ledger.claimMany(['k2', 'k3'], 't2', 'b1.1', gate)).toEqual({ outcome: 'wait', retryAt: 0 });
    const nextProbeAt = Date.now() + 30_000;
    await redis.hset(keys.breaker, { state: 'open', nextProbeAt });
    expect(await ledger.claimMany(['k2', 'k3'], 't2', 'b1.1', gate)).toEqual({ outcome: 'wait', retryAt: nextProbeAt });
    expect(await ledger.getMany(['k2', 'k3'])).toEqual([
      expect.objectContaining({ state: 'queued', attempts: 0 }),
      expect.objectContaining({ state: 'queued', attempts: 0 }),
    ]);

    // Closed again: every record that can be sent is claimed.
    await redis.hset(keys.breaker, { state: 'closed' });
    expect(await ledger.claimMany(['k2', 'k3'], 't3', 'b1.1', gate)).toEqual({
      outcome: 'claims',
      trial: false,
      records: Array(2).fill({ outcome: 'claimed', attempt: 1 }),
    });
  });

  it("finds a record an earlier attempt left `sending` stale, with that attempt's token", async () => {
    await queuedChunk('b1.1', ['k1', 'k2']);
    await ledger.claimMany(['k1', 'k2'], 'died', 'b1.1');
    await ledger.settleMany([
      {
        orderKey: 'k2',
        batchId: 'b1',
        token: 'died',
        state: 'queued',
        httpStatus: 503,
        code: 'HTTP_503',
        message: 'busy',
      },
    ]);
    // The worker died before it settled k1.
    expect(await ledger.claimMany(['k1', 'k2'], 'next', 'b1.1')).toEqual({
      outcome: 'claims',
      trial: false,
      records: [
        { outcome: 'stale', staleToken: 'died' },
        { outcome: 'claimed', attempt: 2 },
      ],
    });
    expect(await ledger.currentToken('k1')).toBe('died');
  });

  it('settles delivered, dead, held and queued records in one call, each batch counter added right; a wrong token is `lost`', async () => {
    await newBatch('b2');
    await queuedChunk('b1.1', ['s1', 's2', 's3', 's4', 's5']);
    await queuedChunk('b2.1', ['o1'], 'b2');
    await ledger.claimMany(['s1', 's2', 's3', 's4', 's5'], 't1', 'b1.1');
    await ledger.claimMany(['o1'], 't1', 'b2.1');

    const outcomes = await ledger.settleMany([
      { orderKey: 's1', batchId: 'b1', token: 't1', state: 'delivered', remoteId: 'SIM-1', httpStatus: 201 },
      {
        orderKey: 's2',
        batchId: 'b1',
        token: 't1',
        state: 'dead',
        httpStatus: 422,
        code: 'PRODUCT_UNKNOWN',
        message: 'no such product',
        parkedRecord: { kind: 'dead', key: 's2' },
      },
      {
        orderKey: 's3',
        batchId: 'b1',
        token: 't1',
        state: 'held',
        code: 'OUTCOME_UNKNOWN',
        message: 'no answer',
        parkedRecord: { kind: 'held', key: 's3' },
      },
      {
        orderKey: 's4',
        batchId: 'b1',
        token: 't1',
        state: 'queued',
        httpStatus: 503,
        code: 'HTTP_503',
        message: 'busy',
        answered5xx: true,
      },
      {
        orderKey: 's5',
        batchId: 'b1',
        token: 'not-mine',
        state: 'dead',
        code: 'X',
        message: 'm',
        parkedRecord: { kind: 'dead', key: 's5' },
      },
      { orderKey: 'o1', batchId: 'b2', token: 't1', state: 'delivered', remoteId: 100001, httpStatus: 200 },
    ]);
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'lost', 'ok']);
    expect(await batches.get('b1')).toMatchObject({
      enqueued: 5,
      delivered: 1,
      dead: 1,
      held: 1,
      possibleDuplicates: 0,
    });
    expect(await batches.get('b2')).toMatchObject({ enqueued: 1, delivered: 1, dead: 0, held: 0 });

    const [s1, s2, s3, s4, s5, o1] = await ledger.getMany(['s1', 's2', 's3', 's4', 's5', 'o1']);
    expect(s1).toMatchObject({ state: 'delivered', remoteId: 'SIM-1', httpStatus: 201, attempts: 1 });
    expect(s2).toMatchObject({ state: 'dead', httpStatus: 422, code: 'PRODUCT_UNKNOWN' });
    expect(s3).toMatchObject({ state: 'held', code: 'OUTCOME_UNKNOWN' });
    expect(s4).toMatchObject({ state: 'queued', answered5xx: 1, httpStatus: 503 });
    expect(s5).toMatchObject({ state: 'sending' }); // another attempt's: left alone
    expect(o1).toMatchObject({ state: 'delivered', remoteId: 100001 });
    expect(await redis.zrange(keys.parkedIndex('dead'), '0', '-1')).toEqual(['s2']);
    expect(await redis.zrange(keys.parkedIndex('held'), '0', '-1')).toEqual(['s3']);
    expect(JSON.parse((await redis.get(keys.parked('dead', 's2')))!)).toEqual({ kind: 'dead', key: 's2' });
    expect(await redis.exists(keys.parked('dead', 's5'))).toBe(0);
    expect(await redis.pttl(keys.ledger('s3'))).toBe(-1); // a held entry outlives any retention
    expect(await ledger.currentToken('s2')).toBeUndefined();

    // The next attempt delivers the record answered 5xx: a possible duplicate; a second delivered settle is `already`.
    expect(await ledger.claimMany(['s1', 's2', 's3', 's4'], 't2', 'b1.1')).toEqual({
      outcome: 'claims',
      trial: false,
      records: [
        { outcome: 'delivered', remoteId: 'SIM-1' },
        { outcome: 'dead' },
        { outcome: 'held' },
        { outcome: 'claimed', attempt: 2 },
      ],
    });
    expect(
      await ledger.settleMany([
        { orderKey: 's4', batchId: 'b1', token: 't2', state: 'delivered', remoteId: 'SIM-4', httpStatus: 201 },
        { orderKey: 's1', batchId: 'b1', token: 't2', state: 'delivered', remoteId: 'SIM-1', httpStatus: 201 },
      ]),
    ).toEqual(['ok', 'already']);
    expect(await batches.get('b1')).toMatchObject({ delivered: 2, dead: 1, held: 1, possibleDuplicates: 1 });
    expect(await ledger.get('s4')).toMatchObject({ state: 'delivered', attempts: 2, answered5xx: 1 });
  });

  it("an entry queued in a chunk is alive while the chunk's job exists; without it, and once stale, another batch takes it over", async () => {
    await newBatch('b2');
    // An importer that reserved the chunk and died before adding its job.
    await ledger.reserveChunks(
      [[item('k1')]],
      ['b1.1'],
      { name: 'deliver-orders', layout: undefined },
      { batchId: 'b1' },
    );
    const reserveK1 = async (by: Ledger = ledger) =>
      (
        await by.reserveChunks(
          [[item('k1')]],
          ['b2.1'],
          { name: 'deliver-orders', layout: undefined },
          { batchId: 'b2' },
        )
      )[0];
    // No job yet, but too young to tell from an import between reserving and adding. Asked through a
    // ledger whose staleness is a minute, so a slow machine cannot make the entry stale before this line.
    const patient = new Ledger(redis, keys, { queueName: 'orders', staleQueuedMs: 60_000 });
    expect(await reserveK1(patient)).toEqual([{ outcome: 'queued', batchId: 'b1' }]);

    await redis.hset(keys.job('orders', 'b1.1'), 'name', 'deliver-orders'); // the chunk job BullMQ holds
    await new Promise((r) => setTimeout(r, 80)); // older than staleQueuedMs
    expect(await reserveK1()).toEqual([{ outcome: 'queued', batchId: 'b1' }]);
    expect(await ledger.get('k1')).toMatchObject({ state: 'queued', batchId: 'b1', chunkId: 'b1.1' });

    // The chunk's job is gone; a job with the key as id (an earlier release's) proves nothing for an entry queued in a chunk.
    await redis.del(keys.job('orders', 'b1.1'));
    await redis.hset(keys.job('orders', 'k1'), 'name', 'deliver-order');
    expect(await reserveK1()).toEqual([{ outcome: 'reserved' }]);
    expect(await ledger.get('k1')).toMatchObject({ state: 'queued', batchId: 'b2', chunkId: 'b2.1' });
    // The old chunk no longer owns it: its claim finds it moved, its late confirm counts nothing.
    expect(await ledger.claimMany(['k1'], 't', 'b1.1')).toEqual({
      outcome: 'claims',
      trial: false,
      records: [{ outcome: 'moved' }],
    });
    expect(await ledger.confirmChunks([{ chunkId: 'b1.1', orderKeys: ['k1'] }], 'b1')).toBe(0);
    expect(await ledger.confirmChunks([{ chunkId: 'b2.1', orderKeys: ['k1'] }], 'b2')).toBe(1);
    expect(await batches.get('b1')).toMatchObject({ enqueued: 0 });
    expect(await batches.get('b2')).toMatchObject({ enqueued: 1 });
  });

  it("a stale chunk entry is taken over into another batch's chunk, which then owns it", async () => {
    await newBatch('b2');
    await ledger.reserveChunks(
      [[item('k1'), item('k2')]],
      ['b1.1'],
      { name: 'deliver-orders', layout: undefined },
      { batchId: 'b1' },
    ); // its importer died here
    await new Promise((r) => setTimeout(r, 80));
    const [results] = await ledger.reserveChunks(
      [[item('k1'), item('k2')]],
      ['b2.1'],
      { name: 'deliver-orders', layout: undefined },
      { batchId: 'b2' },
    );
    expect(results).toEqual([{ outcome: 'reserved' }, { outcome: 'reserved' }]);
    expect(await ledger.getMany(['k1', 'k2'])).toEqual([
      expect.objectContaining({ batchId: 'b2', chunkId: 'b2.1' }),
      expect.objectContaining({ batchId: 'b2', chunkId: 'b2.1' }),
    ]);
    // The dead importer's chunk is still kept (a reconciler adds it; its claim then finds both moved), and counts nothing.
    expect((await ledger.stranded(Date.now() + 1, 10)).map((s) => s.jobId).sort()).toEqual(['b1.1', 'b2.1']);
    expect(await ledger.confirmChunks([{ chunkId: 'b1.1', orderKeys: ['k1', 'k2'] }], 'b1')).toBe(0);
    expect(await ledger.claimMany(['k1', 'k2'], 't', 'b1.1')).toEqual({
      outcome: 'claims',
      trial: false,
      records: [{ outcome: 'moved' }, { outcome: 'moved' }],
    });
    expect(await ledger.confirmChunks([{ chunkId: 'b2.1', orderKeys: ['k1', 'k2'] }], 'b2')).toBe(2);
    expect(await batches.get('b1')).toMatchObject({ enqueued: 0 });
    expect(await batches.get('b2')).toMatchObject({ enqueued: 2 });
  });
});
