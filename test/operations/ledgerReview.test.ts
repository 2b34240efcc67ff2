import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyspace } from '../../src/keyspace.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { BatchStore } from '../../src/batches/batchStore.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { claimKey, confirmKeys, reserveKeys, settleKey } from '../helpers/ledgerReserve.js';
/** The job a release keeps until it is confirmed queued: a chunk of one of the new batch. */
const jobIn = (batchId: string) => ({
  id: `${batchId}.r1`,
  name: 'test-job',
  data: { batchId, records: [{ key: 'k1' }] },
});
const KEPT = JSON.stringify({ name: 'test-job', data: jobIn('b2').data });

const redis = testRedis();
let prefix: string;
let ledger: Ledger;
let batches: BatchStore;

beforeEach(async () => {
  prefix = testPrefix('review-ledger');
  const keys = keyspace(prefix);
  ledger = new Ledger(redis, keys, { queueName: 'orders' });
  batches = new BatchStore(redis, keys, 60_000);
  await batches.create({
    id: 'b1',
    file: 'f.csv',
    sha256: 'x',
    env: 'acceptance',
    columns: ['a'],
  });
});
afterEach(async () => deletePrefix(redis, prefix));
afterAll(() => redis.disconnect());

async function park(key: string, kind: 'dead' | 'held'): Promise<void> {
  await reserveKeys(ledger, [key], 'b1', false);
  await confirmKeys(ledger, [key], 'b1');
  await claimKey(ledger, key, 't1');
  await settleKey(ledger, {
    orderKey: key,
    batchId: 'b1',
    token: 't1',
    state: kind,
    code: 'X',
    message: 'm',
    parkedRecord: { kind, orderKey: key },
  });
}

describe('ledger transitions made by a person', () => {
  it('release moves held -> queued in the new batch, removes the held record and records who did it', async () => {
    await park('k1', 'held');
    const result = await ledger.release('k1', 'b2', { by: 'anna', note: 'not in the portal' }, jobIn('b2'));
    expect(result).toMatchObject({ outcome: 'released', previousBatchId: 'b1' });
    expect(JSON.parse((result as { record: string }).record)).toMatchObject({ kind: 'held' });
    expect(await ledger.get('k1')).toMatchObject({
      state: 'queued',
      batchId: 'b2',
      review: { action: 'released', by: 'anna', note: 'not in the portal' },
    });
    expect(await redis.exists(`${prefix}:held:k1`)).toBe(0);
    expect(await redis.zcard(`${prefix}:held-index`)).toBe(0);
    // The job is kept until confirmed queued: a crash before adding it is finished by a reconciler.
    expect(await ledger.stranded(Date.now() + 1, 10)).toEqual([
      expect.objectContaining({ jobId: 'b2.r1', state: 'queued', batchId: 'b2', job: KEPT, chunkKeys: ['k1'] }),
    ]);
    expect(await ledger.get('k1')).toMatchObject({ chunkId: 'b2.r1' });
    expect(await ledger.confirmChunks([{ chunkId: 'b2.r1', orderKeys: ['k1'] }], 'b2')).toBe(1);
    expect(await ledger.stranded(Date.now() + 1, 10)).toEqual([]);
    expect(await claimKey(ledger, 'k1', 't2')).toEqual({ outcome: 'claimed', attempt: 2 });
    expect(await ledger.release('k1', 'b3', { by: 'anna' }, jobIn('b3'))).toEqual({
      outcome: 'not-held',
      state: 'sending',
    });
  });

  it('unrelease puts a released order back on hold while nothing claimed it, and not after', async () => {
    await park('k1', 'held');
    const result = await ledger.release('k1', 'b2', { by: 'anna' }, jobIn('b2'));
    if (result.outcome !== 'released') throw new Error('not released');
    const undo = { previousBatchId: result.previousBatchId, record: result.record, parkedAt: 123 };
    expect(await ledger.unrelease('k1', { ...undo, releasedBatchId: 'b2', chunkId: 'b2.r1' })).toBe(true);
    expect(await ledger.get('k1')).toMatchObject({ state: 'held', batchId: 'b1' });
    expect((await ledger.get('k1'))?.chunkId).toBeUndefined();
    expect(await ledger.stranded(Date.now() + 1, 10)).toEqual([]);
    expect((await ledger.get('k1'))?.review).toBeUndefined();
    expect(await redis.zscore(`${prefix}:held-index`, 'k1')).toBe('123');
    const again = await ledger.release('k1', 'b3', { by: 'anna' }, jobIn('b3'));
    if (again.outcome !== 'released') throw new Error('not released');
    await claimKey(ledger, 'k1', 't3');
    expect(
      await ledger.unrelease('k1', {
        releasedBatchId: 'b3',
        previousBatchId: again.previousBatchId,
        record: again.record,
        parkedAt: 123,
        chunkId: 'b3.r1',
      }),
    ).toBe(false);
  });

  it('resolve records held -> delivered without sending, moves the batch count, and an import then skips it', async () => {
    await park('k1', 'held');
    expect(await batches.get('b1')).toMatchObject({ held: 1, delivered: 0 });
    expect(await ledger.resolveDelivered('k1', { by: 'bert', remoteId: 'ORD-1' })).toBe('resolved');
    expect(await ledger.get('k1')).toMatchObject({
      state: 'delivered',
      remoteId: 'ORD-1',
      review: { action: 'resolved', by: 'bert' },
    });
    expect(await batches.get('b1')).toMatchObject({ held: 0, delivered: 1 });
    expect(await redis.exists(`${prefix}:held:k1`)).toBe(0);
    expect(await reserveKeys(ledger, ['k1'], 'b2', false)).toEqual([{ outcome: 'delivered', batchId: 'b1' }]);
    expect(await ledger.resolveDelivered('k1', { by: 'bert' })).toBe('delivered');
  });

  it('a held record outliving its ledger entry can still be released or resolved', async () => {
    await park('k1', 'held');
    await park('k2', 'held');
    await redis.del(`${prefix}:ledger:k1`, `${prefix}:ledger:k2`);
    expect(await ledger.release('k1', 'b2', { by: 'anna' }, jobIn('b2'))).toMatchObject({
      outcome: 'released',
      previousBatchId: '',
    });
    expect(await ledger.resolveDelivered('k2', { by: 'anna' })).toBe('resolved');
    expect(await ledger.release('k3', 'b2', { by: 'anna' }, jobIn('b2'))).toEqual({
      outcome: 'not-held',
      state: 'missing',
    });
  });

  it('purge drops dead letters and leaves the ledger entry (a dead key stays reservable)', async () => {
    await park('k1', 'dead');
    await park('k2', 'dead');
    expect(await ledger.purgeParked('dead', ['k1', 'k9'])).toBe(1);
    expect(await redis.zrange(`${prefix}:dead-index`, '0', '-1')).toEqual(['k2']);
    expect(await redis.exists(`${prefix}:dead:k1`)).toBe(0);
    expect((await ledger.get('k1'))?.state).toBe('dead');
    expect(await reserveKeys(ledger, ['k1'], 'b2', false)).toEqual([{ outcome: 'reserved' }]);
  });
});
