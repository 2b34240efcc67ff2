import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { keyspace, type Keyspace } from '../../src/keyspace.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { differingParts, fingerprintOf } from '../../src/ledger/fingerprint.js';
import { BatchStore } from '../../src/batches/batchStore.js';
import { reconcileImports } from '../../src/importer/reconcileImports.js';
import { createLogger } from '../../src/logger.js';
import { chunkJobId } from '../../src/queues.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { claimKey, confirmKeys, settleKey } from '../helpers/ledgerReserve.js';

const redis = testRedis();
let prefix: string;
let keys: Keyspace;
let ledger: Ledger;
let batches: BatchStore;
let queue: Queue;

const order = (lastName: string, productId = 5001) => ({
  businessCustomerId: 1001,
  recipient: { lastName, city: 'Utrecht' },
  products: [{ productId, quantity: 1 }],
});
let chunks = 0;

/** Reserves one key with its content in a chunk of one of `batchId` (a stand-in record); returns its result and chunk id. */
async function reserve(
  key: string,
  content: ReturnType<typeof order>,
  batchId: string,
  force = false,
  record: unknown = { key },
): Promise<{ result: Awaited<ReturnType<Ledger['reserveChunks']>>[number][number]; chunkId: string }> {
  const chunkId = chunkJobId(batchId, ++chunks);
  const [reserved] = await ledger.reserveChunks(
    [[{ orderKey: key, fingerprint: fingerprintOf(content), record }]],
    [chunkId],
    { name: 'deliver-orders', layout: undefined },
    { batchId, force },
  );
  return { result: reserved![0]!, chunkId };
}

/** What an earlier release's import left when it died between reserving a job of one order and adding it. */
async function keepJobOfOne(key: string, batchId: string, job: unknown): Promise<void> {
  const now = Date.now();
  await redis
    .multi()
    .hset(keys.ledger(key), { s: 'queued', b: batchId, u: now })
    .hset(keys.unqueuedJobs, key, JSON.stringify(job))
    .zadd(keys.unqueued, now, key)
    .exec();
}

beforeEach(async () => {
  prefix = testPrefix('content');
  keys = keyspace(prefix);
  ledger = new Ledger(redis, keys, { queueName: 'orders' });
  batches = new BatchStore(redis, keys, 60_000);
  queue = new Queue('orders', { connection: redis, prefix });
  await batches.create({
    id: 'b1',
    file: 'f.csv',
    sha256: 'x',
    env: 'acceptance',
    columns: ['a'],
  });
});
afterEach(async () => {
  await queue.close();
  await deletePrefix(redis, prefix);
});
afterAll(() => redis.disconnect());

async function deliver(key: string, batchId: string): Promise<void> {
  await claimKey(ledger, key, 't');
  await settleKey(ledger, { orderKey: key, batchId, token: 't', state: 'delivered', remoteId: 'R', httpStatus: 201 });
}

describe('the ledger remembers content', () => {
  it('fingerprints ignore key order and product order, and name the parts that differ', () => {
    const a = fingerprintOf({
      products: [
        { productId: 1, quantity: 2 },
        { productId: 3, quantity: 1 },
      ],
      recipient: { b: 1, a: 2 },
    });
    const b = fingerprintOf({
      recipient: { a: 2, b: 1 },
      products: [
        { quantity: 1, productId: 3 },
        { quantity: 2, productId: 1 },
      ],
    });
    expect(a).toEqual(b);
    expect(fingerprintOf(order('Bakker')).hash).not.toBe(fingerprintOf(order('Jansen')).hash);
    expect(differingParts(fingerprintOf(order('Bakker')).parts, fingerprintOf(order('Jansen', 5002)).parts)).toEqual([
      'products',
      'recipient',
    ]);
    expect(differingParts(fingerprintOf(order('Bakker')).parts, fingerprintOf(order('Bakker')).parts)).toEqual([]);
  });

  it('a delivered key with other content is a conflict; the same content is delivered; a dead key takes new content; --force overrides', async () => {
    await reserve('k1', order('Bakker'), 'b1');
    await deliver('k1', 'b1');
    const same = await reserve('k1', order('Bakker'), 'b2');
    expect(same.result).toEqual({ outcome: 'delivered', batchId: 'b1' });
    const other = await reserve('k1', order('Jansen', 5002), 'b2');
    expect(other.result).toMatchObject({ outcome: 'conflict', batchId: 'b1', state: 'delivered' });
    const forced = await reserve('k1', order('Jansen'), 'b2', true);
    expect(forced.result).toEqual({ outcome: 'reserved' });

    await reserve('k2', order('Bakker'), 'b1');
    await claimKey(ledger, 'k2', 't');
    await settleKey(ledger, {
      orderKey: 'k2',
      batchId: 'b1',
      token: 't',
      state: 'dead',
      code: 'PRODUCT_UNKNOWN',
      parkedRecord: {},
    });
    const fixed = await reserve('k2', order('Bakker', 5002), 'b3');
    expect(fixed.result).toEqual({ outcome: 'reserved' });
  });

  it('confirming a queued job counts it once for its batch', async () => {
    await reserve('k1', order('A'), 'b1');
    expect(await confirmKeys(ledger, ['k1'], 'b1')).toBe(1);
    expect(await confirmKeys(ledger, ['k1'], 'b1')).toBe(0);
    expect((await batches.get('b1'))?.enqueued).toBe(1);
  });

  it('a reconciler queues the kept job of a dead importer and closes its batch; it leaves a live importer alone', async () => {
    const { chunkId } = await reserve('k1', order('A'), 'b1');
    const deps = { ledger, batches, queue, jobOptions: {}, logger: createLogger({ level: 'silent' }) };
    const later = Date.now() + 5_000;
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 0, confirmed: 0, closed: [], held: 0 }); // b1 beats
    expect(await queue.getJob(chunkId)).toBeUndefined();

    await redis.del(keys.batchOwner('b1')); // its heartbeat lapsed
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 1, confirmed: 0, closed: ['b1'], held: 0 });
    expect((await queue.getJob(chunkId))?.data).toEqual({ v: 2, batchId: 'b1', records: [{ key: 'k1' }] });
    expect(await batches.get('b1')).toMatchObject({ importState: 'interrupted', enqueued: 1 });
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 0, confirmed: 0, closed: [], held: 0 });
  });

  it("a reconciler queues an earlier release's kept job of one order under its key, and counts it once", async () => {
    const legacy = { name: 'deliver-order', data: { v: 2, key: 'k1', batchId: 'b1', lines: [2], payload: {} } };
    await keepJobOfOne('k1', 'b1', legacy);
    await redis.del(keys.batchOwner('b1'));
    const deps = { ledger, batches, queue, jobOptions: {}, logger: createLogger({ level: 'silent' }) };
    const later = Date.now() + 5_000;
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 1, confirmed: 0, closed: ['b1'], held: 0 });
    expect((await queue.getJob('k1'))?.data).toEqual(legacy.data);
    expect(await batches.get('b1')).toMatchObject({ importState: 'interrupted', enqueued: 1 });
    expect(await redis.zcard(keys.unqueued)).toBe(0);
    expect(await redis.hlen(keys.unqueuedJobs)).toBe(0);
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 0, confirmed: 0, closed: [], held: 0 });
    // Another batch of that release reserved the key since: its kept job under the same key is left alone.
    await keepJobOfOne('k2', 'b1', legacy);
    await redis.hset(keys.ledger('k2'), 'b', 'b2');
    expect(await ledger.confirmChunks([{ chunkId: 'k2', orderKeys: ['k2'] }], 'b1')).toBe(0);
    expect(await redis.hexists(keys.unqueuedJobs, 'k2')).toBe(1);
  });

  it('keeps an entry compact: the kept job lives apart, so the entry stays a listpack however long it lives', async () => {
    const bulky = { key: 'k1', lines: [2], payload: 'x'.repeat(500) };
    const realistic = {
      businessCustomerId: 1007,
      recipient: { lastName: 'de Vries', city: 'Utrecht' },
      products: [{ productId: 5009, quantity: 3 }],
    };
    const { chunkId } = await reserve('k1', realistic, 'b1', false, bulky);
    const kept = { name: 'deliver-orders', data: { v: 2, batchId: 'b1', records: [bulky] } };
    expect(JSON.parse((await redis.hget(keys.unqueuedJobs, chunkId))!)).toEqual(kept);
    expect((await ledger.stranded(Date.now() + 1, 10))[0]).toMatchObject({
      jobId: chunkId,
      state: 'queued',
      job: JSON.stringify(kept),
      chunkKeys: ['k1'],
    });
    expect(await confirmKeys(ledger, ['k1'], 'b1')).toBe(1);
    expect(await redis.hexists(keys.unqueuedJobs, chunkId)).toBe(0);
    await deliver('k1', 'b1');
    expect(await redis.object('ENCODING', keys.ledger('k1'))).toBe('listpack');
  });

  it('still finds, confirms and drops a job kept in the entry itself (entries written before), and compares 8-hex part digests', async () => {
    const legacy = { name: 'deliver-order', data: { key: 'k1', batchId: 'b1' } };
    await keepJobOfOne('k1', 'b1', legacy);
    const kept = (await redis.hget(keys.unqueuedJobs, 'k1'))!;
    await redis.multi().hdel(keys.unqueuedJobs, 'k1').hset(keys.ledger('k1'), 'j', kept).exec();
    expect((await ledger.stranded(Date.now() + 1, 10))[0]).toMatchObject({ jobId: 'k1', job: kept, chunkKeys: ['k1'] });
    expect(await ledger.confirmChunks([{ chunkId: 'k1', orderKeys: ['k1'] }], 'b1')).toBe(1);
    expect(await redis.hexists(keys.ledger('k1'), 'j')).toBe(0);
    expect((await batches.get('b1'))?.enqueued).toBe(1);
    expect(differingParts('products=d0d66857;recipient=f594a381', 'products=d0d668;recipient=aaaaaa')).toEqual([
      'recipient',
    ]);
  });

  it('a reconciler that drops index members drops the kept job of an expired entry, never that of a live reservation', async () => {
    for (const key of ['k1', 'k2'])
      await keepJobOfOne(key, 'b1', { name: 'deliver-order', data: { key, batchId: 'b1' } });
    await redis.del(keys.ledger('k1')); // expired before its job was confirmed
    await ledger.touchStranded(['k1', 'k2'], undefined);
    expect(await redis.zcard(keys.unqueued)).toBe(0);
    expect(await redis.hkeys(keys.unqueuedJobs)).toEqual(['k2']);
  });
});
