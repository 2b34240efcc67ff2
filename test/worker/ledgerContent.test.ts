import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { keyspace, type Keyspace } from '../../src/keyspace.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { differingParts, fingerprintOf } from '../../src/ledger/fingerprint.js';
import { BatchStore } from '../../src/batches/batchStore.js';
import { reconcileImports } from '../../src/importer/reconcileImports.js';
import { createLogger } from '../../src/logger.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';

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
const job = (key: string, batchId: string) => ({ name: 'deliver-order', data: { key, batchId } });

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
    startedAt: Date.now(),
    columns: ['a'],
  });
});
afterEach(async () => {
  await queue.close();
  await deletePrefix(redis, prefix);
});
afterAll(() => redis.disconnect());

async function deliver(key: string, batchId: string): Promise<void> {
  await ledger.claim(key, 't');
  await ledger.settle({ orderKey: key, batchId, token: 't', state: 'delivered', remoteId: 'R', httpStatus: 201 });
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
    await ledger.reserveJobs(
      [{ orderKey: 'k1', fingerprint: fingerprintOf(order('Bakker')), job: job('k1', 'b1') }],
      'b1',
      false,
    );
    await deliver('k1', 'b1');
    const [same] = await ledger.reserveJobs(
      [{ orderKey: 'k1', fingerprint: fingerprintOf(order('Bakker')), job: job('k1', 'b2') }],
      'b2',
      false,
    );
    expect(same).toEqual({ outcome: 'delivered', batchId: 'b1' });
    const [other] = await ledger.reserveJobs(
      [{ orderKey: 'k1', fingerprint: fingerprintOf(order('Jansen', 5002)), job: job('k1', 'b2') }],
      'b2',
      false,
    );
    expect(other).toMatchObject({ outcome: 'conflict', batchId: 'b1', state: 'delivered' });
    const [forced] = await ledger.reserveJobs(
      [{ orderKey: 'k1', fingerprint: fingerprintOf(order('Jansen')), job: job('k1', 'b2') }],
      'b2',
      true,
    );
    expect(forced).toEqual({ outcome: 'reserved' });

    await ledger.reserveJobs(
      [{ orderKey: 'k2', fingerprint: fingerprintOf(order('Bakker')), job: job('k2', 'b1') }],
      'b1',
      false,
    );
    await ledger.claim('k2', 't');
    await ledger.settle({
      orderKey: 'k2',
      batchId: 'b1',
      token: 't',
      state: 'dead',
      code: 'PRODUCT_UNKNOWN',
      parkedRecord: {},
    });
    const [fixed] = await ledger.reserveJobs(
      [{ orderKey: 'k2', fingerprint: fingerprintOf(order('Bakker', 5002)), job: job('k2', 'b3') }],
      'b3',
      false,
    );
    expect(fixed).toEqual({ outcome: 'reserved' });
  });

  it('confirming a queued job counts it once for its batch', async () => {
    await ledger.reserveJobs(
      [{ orderKey: 'k1', fingerprint: fingerprintOf(order('A')), job: job('k1', 'b1') }],
      'b1',
      false,
    );
    expect(await ledger.confirmQueued(['k1'], 'b1')).toBe(1);
    expect(await ledger.confirmQueued(['k1'], 'b1')).toBe(0);
    expect((await batches.get('b1'))?.enqueued).toBe(1);
  });

  it('a reconciler queues the kept job of a dead importer and closes its batch; it leaves a live importer alone', async () => {
    await ledger.reserveJobs(
      [{ orderKey: 'k1', fingerprint: fingerprintOf(order('A')), job: job('k1', 'b1') }],
      'b1',
      false,
    );
    const deps = { ledger, batches, queue, jobOptions: {}, logger: createLogger({ level: 'silent' }) };
    const later = Date.now() + 5_000;
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 0, confirmed: 0, closed: [] }); // b1 beats
    expect(await queue.getJob('k1')).toBeUndefined();

    await redis.del(keys.batchOwner('b1')); // its heartbeat lapsed
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 1, confirmed: 0, closed: ['b1'] });
    expect((await queue.getJob('k1'))?.data).toEqual({ key: 'k1', batchId: 'b1' });
    expect(await batches.get('b1')).toMatchObject({ importState: 'interrupted', enqueued: 1 });
    expect(await reconcileImports(deps, later)).toEqual({ requeued: 0, confirmed: 0, closed: [] });
  });

  it('keeps an entry compact: the kept job lives apart, so the entry stays a listpack however long it lives', async () => {
    const bulky = { name: 'deliver-order', data: { key: 'k1', batchId: 'b1', payload: 'x'.repeat(500) } };
    const realistic = {
      businessCustomerId: 1007,
      recipient: { lastName: 'de Vries', city: 'Utrecht' },
      products: [{ productId: 5009, quantity: 3 }],
    };
    await ledger.reserveJobs([{ orderKey: 'k1', fingerprint: fingerprintOf(realistic), job: bulky }], 'b1', false);
    expect(JSON.parse((await redis.hget(keys.unqueuedJobs, 'k1'))!)).toEqual(bulky);
    expect((await ledger.stranded(Date.now() + 1, 10))[0]).toMatchObject({
      orderKey: 'k1',
      state: 'queued',
      job: JSON.stringify(bulky),
    });
    expect(await ledger.confirmQueued(['k1'], 'b1')).toBe(1);
    expect(await redis.hexists(keys.unqueuedJobs, 'k1')).toBe(0);
    await deliver('k1', 'b1');
    expect(await redis.object('ENCODING', keys.ledger('k1'))).toBe('listpack');
  });

  it('still finds, confirms and drops a job kept in the entry itself (entries written before), and compares 8-hex part digests', async () => {
    await ledger.reserveJobs(
      [{ orderKey: 'k1', fingerprint: fingerprintOf(order('A')), job: job('k1', 'b1') }],
      'b1',
      false,
    );
    const kept = (await redis.hget(keys.unqueuedJobs, 'k1'))!;
    await redis.multi().hdel(keys.unqueuedJobs, 'k1').hset(keys.ledger('k1'), 'j', kept).exec();
    expect((await ledger.stranded(Date.now() + 1, 10))[0]?.job).toBe(kept);
    expect(await ledger.confirmQueued(['k1'], 'b1')).toBe(1);
    expect(await redis.hexists(keys.ledger('k1'), 'j')).toBe(0);
    expect((await batches.get('b1'))?.enqueued).toBe(1);
    expect(differingParts('products=d0d66857;recipient=f594a381', 'products=d0d668;recipient=aaaaaa')).toEqual([
      'recipient',
    ]);
  });

  it('a reconciler that drops index members drops the kept job of an expired entry, never that of a live reservation', async () => {
    await ledger.reserveJobs(
      ['k1', 'k2'].map((key) => ({ orderKey: key, fingerprint: fingerprintOf(order('A')), job: job(key, 'b1') })),
      'b1',
      false,
    );
    await redis.del(keys.ledger('k1')); // expired before its job was confirmed
    await ledger.touchStranded(['k1', 'k2'], undefined);
    expect(await redis.zcard(keys.unqueued)).toBe(0);
    expect(await redis.hkeys(keys.unqueuedJobs)).toEqual(['k2']);
  });
});
