import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyspace } from '../../src/keyspace.js';
import { Ledger, POSSIBLE_DUPLICATE, possibleDuplicate } from '../../src/ledger/ledger.js';
import { BatchStore } from '../../src/batches/batchStore.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { claimKey, confirmKeys, reserveKeys, settleKey } from '../helpers/ledgerReserve.js';

const redis = testRedis();
let prefix: string;
let ledger: Ledger;
let batches: BatchStore;

beforeEach(async () => {
  prefix = testPrefix('ledger');
  const keys = keyspace(prefix);
  // The default stale limit (60 s): a test that meant "still queued" must not fail on a busy machine.
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

describe('ledger', () => {
  it('reserves an unknown key once; a second reservation sees it queued while its job exists', async () => {
    expect(await reserveKeys(ledger, ['k1'], 'b1', false)).toEqual([{ outcome: 'reserved' }]);
    const { chunkId } = (await ledger.get('k1'))!;
    await redis.hset(`${prefix}:orders:${chunkId!}`, 'name', 'deliver-orders'); // the job BullMQ would hold
    expect(await reserveKeys(ledger, ['k1'], 'b2', false)).toEqual([{ outcome: 'queued', batchId: 'b1' }]);
  });

  it('takes over a stale reservation that has no job behind it (an import that died mid-chunk)', async () => {
    await reserveKeys(ledger, ['k1'], 'b1', false);
    expect(await reserveKeys(ledger, ['k1'], 'b2', false)).toEqual([{ outcome: 'queued', batchId: 'b1' }]);
    await new Promise((r) => setTimeout(r, 80));
    // At least 80 ms later, a ledger whose stale limit is 50 ms takes it over.
    const quick = new Ledger(redis, keyspace(prefix), { queueName: 'orders', staleQueuedMs: 50 });
    expect(await reserveKeys(quick, ['k1'], 'b2', false)).toEqual([{ outcome: 'reserved' }]);
    expect((await ledger.get('k1'))?.batchId).toBe('b2');
  });

  it('never claims a delivered order, and skips it at import unless forced', async () => {
    await reserveKeys(ledger, ['k1'], 'b1', false);
    expect(await claimKey(ledger, 'k1', 't1')).toEqual({ outcome: 'claimed', attempt: 1 });
    expect(
      await settleKey(ledger, {
        orderKey: 'k1',
        batchId: 'b1',
        token: 't1',
        state: 'delivered',
        remoteId: 'SIM-1',
        httpStatus: 201,
      }),
    ).toBe('ok');
    expect(await claimKey(ledger, 'k1', 't2')).toEqual({ outcome: 'delivered', remoteId: 'SIM-1' });
    expect(await reserveKeys(ledger, ['k1'], 'b2', false)).toEqual([{ outcome: 'delivered', batchId: 'b1' }]);
    expect(await reserveKeys(ledger, ['k1'], 'b2', true)).toEqual([{ outcome: 'reserved' }]);
    const entry = await ledger.get('k1');
    expect(entry).toMatchObject({ state: 'queued', batchId: 'b2', remoteId: 'SIM-1' });
    expect((await batches.get('b1'))?.delivered).toBe(1);
  });

  it('keeps a remote id in its JSON type, and marks a delivery after a 5xx answer as a possible duplicate until a forced resend', async () => {
    await reserveKeys(ledger, ['k1', 'k2'], 'b1', false);
    await claimKey(ledger, 'k1', 't1');
    await settleKey(ledger, { orderKey: 'k1', batchId: 'b1', token: 't1', state: 'queued', answered5xx: true });
    await claimKey(ledger, 'k1', 't2');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 't2',
      state: 'delivered',
      remoteId: 100001,
      httpStatus: 200,
    });
    expect(await ledger.get('k1')).toMatchObject({ state: 'delivered', remoteId: 100001, answered5xx: 1 });
    expect(possibleDuplicate(await ledger.get('k1'))).toBe(POSSIBLE_DUPLICATE);
    expect(await claimKey(ledger, 'k1', 't3')).toEqual({ outcome: 'delivered', remoteId: 100001 });
    // A retry without an answer (connect refused) is no evidence; a string of digits stays a string.
    await claimKey(ledger, 'k2', 't1');
    await settleKey(ledger, { orderKey: 'k2', batchId: 'b1', token: 't1', state: 'queued' });
    await claimKey(ledger, 'k2', 't2');
    await settleKey(ledger, {
      orderKey: 'k2',
      batchId: 'b1',
      token: 't2',
      state: 'delivered',
      remoteId: '100002',
      httpStatus: 201,
    });
    expect(await ledger.get('k2')).toMatchObject({ remoteId: '100002' });
    expect(possibleDuplicate(await ledger.get('k2'))).toBeUndefined();
    expect(await batches.get('b1')).toMatchObject({ delivered: 2, possibleDuplicates: 1 });
    await reserveKeys(ledger, ['k1'], 'b2', true);
    expect((await ledger.get('k1'))?.answered5xx).toBeUndefined();
  });

  it('reports a claim found sending as stale (a worker died mid-request), and holding it needs that claim token', async () => {
    await reserveKeys(ledger, ['k1'], 'b1', false);
    await claimKey(ledger, 'k1', 'dead-worker');
    const claim = await claimKey(ledger, 'k1', 'next-worker');
    expect(claim).toEqual({ outcome: 'stale', staleToken: 'dead-worker' });
    expect(await settleKey(ledger, { orderKey: 'k1', batchId: 'b1', token: 'next-worker', state: 'held' })).toBe(
      'lost',
    );
    expect(
      await settleKey(ledger, {
        orderKey: 'k1',
        batchId: 'b1',
        token: 'dead-worker',
        state: 'held',
        code: 'OUTCOME_UNKNOWN',
        message: 'm',
        parkedRecord: { kind: 'held' },
      }),
    ).toBe('ok');
    expect(await redis.zrange(`${prefix}:held-index`, '0', '-1')).toEqual(['k1']);
    expect(await claimKey(ledger, 'k1', 'third')).toEqual({ outcome: 'held' });
    expect(await redis.pttl(`${prefix}:ledger:k1`)).toBe(-1); // held never expires with retention
    expect(await reserveKeys(ledger, ['k1'], 'b2', true)).toEqual([{ outcome: 'held', batchId: 'b1' }]);
    expect((await batches.get('b1'))?.held).toBe(1);
  });

  it('lets the original attempt record delivered over a hold made while it was still waiting, and fixes the counts', async () => {
    await reserveKeys(ledger, ['k1'], 'b1', false);
    await claimKey(ledger, 'k1', 'slow');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 'slow',
      state: 'held',
      parkedRecord: { kind: 'held' },
    });
    expect(
      await settleKey(ledger, {
        orderKey: 'k1',
        batchId: 'b1',
        token: 'slow',
        state: 'delivered',
        remoteId: 'SIM-9',
        httpStatus: 201,
      }),
    ).toBe('ok');
    expect(await redis.exists(`${prefix}:held:k1`)).toBe(0);
    expect(await redis.zcard(`${prefix}:held-index`)).toBe(0);
    expect(await batches.get('b1')).toMatchObject({ held: 0, delivered: 1 });
  });

  it('dead-letters with the record kept, allows a re-import of the fixed order, and drops the dead letter once delivered', async () => {
    await reserveKeys(ledger, ['k1'], 'b1', false);
    await claimKey(ledger, 'k1', 't1');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 't1',
      state: 'dead',
      httpStatus: 422,
      code: 'PRODUCT_UNKNOWN',
      message: 'no such product',
      parkedRecord: { kind: 'dead', code: 'PRODUCT_UNKNOWN' },
    });
    expect(JSON.parse((await redis.get(`${prefix}:dead:k1`))!)).toMatchObject({ code: 'PRODUCT_UNKNOWN' });
    expect(await ledger.get('k1')).toMatchObject({ state: 'dead', httpStatus: 422, code: 'PRODUCT_UNKNOWN' });
    expect(await reserveKeys(ledger, ['k1'], 'b2', false)).toEqual([{ outcome: 'reserved' }]);
    expect(await claimKey(ledger, 'k1', 't2')).toEqual({ outcome: 'claimed', attempt: 2 });
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b2',
      token: 't2',
      state: 'delivered',
      remoteId: 'SIM-2',
      httpStatus: 201,
    });
    expect(await redis.exists(`${prefix}:dead:k1`)).toBe(0);
    expect(await redis.zcard(`${prefix}:dead-index`)).toBe(0);
  });

  it('releases a retried attempt back to queued so the next attempt may claim it', async () => {
    await reserveKeys(ledger, ['k1'], 'b1', false);
    await claimKey(ledger, 'k1', 't1');
    expect(
      await settleKey(ledger, {
        orderKey: 'k1',
        batchId: 'b1',
        token: 't1',
        state: 'queued',
        httpStatus: 503,
        code: 'HTTP_503',
        message: 'busy',
      }),
    ).toBe('ok');
    expect(await claimKey(ledger, 'k1', 't2')).toEqual({ outcome: 'claimed', attempt: 2 });
  });

  it('sends again a sending order under the at-least-once policy', async () => {
    const resend = new Ledger(redis, keyspace(prefix), { queueName: 'orders', ambiguousPolicy: 'resend' });
    await reserveKeys(resend, ['k1'], 'b1', false);
    await claimKey(resend, 'k1', 't1');
    expect(await claimKey(resend, 'k1', 't2')).toEqual({ outcome: 'claimed', attempt: 2 });
  });

  it('a claim keeps the expiry of an entry queued within half the retention, and renews any other', async () => {
    const short = new Ledger(redis, keyspace(prefix), { queueName: 'orders', retentionMs: 100_000 });
    const entry = `${prefix}:ledger:k1`;
    await reserveKeys(short, ['k1'], 'b1', false);
    await redis.pexpire(entry, 80_000); // as if reserved 20 s ago
    await claimKey(short, 'k1', 't1');
    expect(await redis.pttl(entry)).toBeLessThanOrEqual(80_000);
    await settleKey(short, { orderKey: 'k1', batchId: 'b1', token: 't1', state: 'queued' });
    await redis.hset(entry, 'u', Date.now() - 60_000); // queued 60 s ago: more than half the retention
    await redis.pexpire(entry, 40_000);
    await claimKey(short, 'k1', 't2');
    expect(await redis.pttl(entry)).toBeGreaterThan(90_000);
    // No entry at all: it vanished (evicted, or its retention ran out under a job): never claimed, nothing
    // written by the claim; the worker writes it back held (REDIS_KEYS_VANISHED, test/reliability/stuckSending.test.ts).
    expect(await claimKey(short, 'k9', 't1')).toMatchObject({ outcome: 'vanished' });
    expect(await redis.pttl(`${prefix}:ledger:k9`)).toBe(-2);
  });

  it("confirms an order its batch counted before (the breaker's burst requeue) without counting it twice, and a later import counts again", async () => {
    await reserveKeys(ledger, ['k1', 'k2'], 'b1', false);
    expect(await confirmKeys(ledger, ['k1', 'k2'], 'b1')).toBe(2);
    await claimKey(ledger, 'k1', 't1');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 't1',
      state: 'dead',
      code: 'X',
      message: 'm',
      parkedRecord: { kind: 'dead', orderKey: 'k1' },
    });
    expect((await batches.get('b1'))?.dead).toBe(1);
    // The burst goes back into its own batch, which counts it queued already, and stops counting it dead
    // in the same step (a crash right after must not leave the batch looking settled).
    const burst = { id: 'b1.r1', data: { v: 2, batchId: 'b1', records: [{ key: 'k1', lines: [2], payload: {} }] } };
    const requeue = () => ledger.reserveRequeued([burst], { name: 'test-job', alreadyCounted: true }, 'b1');
    expect(await requeue()).toEqual([{ outcome: 'reserved' }]);
    expect((await batches.get('b1'))?.dead).toBe(0);
    // Reserved again while queued: nothing to count down twice.
    expect(await requeue()).toEqual([{ outcome: 'queued', batchId: 'b1' }]);
    expect((await batches.get('b1'))?.dead).toBe(0);
    // Confirmed by whoever comes first (the requeue, or a reconciler after a crash), never counted.
    expect(await ledger.stranded(Date.now() + 1, 10)).toEqual([
      expect.objectContaining({
        jobId: 'b1.r1',
        chunkKeys: ['k1'],
        job: JSON.stringify({ name: 'test-job', data: burst.data }),
      }),
    ]);
    const confirm = () => ledger.confirmChunks([{ chunkId: 'b1.r1', orderKeys: ['k1'] }], 'b1');
    expect(await confirm()).toBe(0);
    expect(await confirm()).toBe(0);
    expect((await batches.get('b1'))?.enqueued).toBe(2);
    expect(await ledger.stranded(Date.now() + 1, 10)).toEqual([]);
    // The flag goes with its confirmation: the next reservation of the key counts as usual.
    await claimKey(ledger, 'k1', 't2');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 't2',
      state: 'dead',
      code: 'X',
      message: 'm',
      parkedRecord: { kind: 'dead', orderKey: 'k1' },
    });
    await batches.create({
      id: 'b2',
      file: 'g.csv',
      sha256: 'y',
      env: 'acceptance',
      columns: ['a'],
    });
    await reserveKeys(ledger, ['k1'], 'b2', false);
    expect(await confirmKeys(ledger, ['k1'], 'b2')).toBe(1);
    expect((await batches.get('b2'))?.enqueued).toBe(1);
  });

  it('settles a delivery without recreating an expired batch record, and leaves no claim token behind', async () => {
    await reserveKeys(ledger, ['k1', 'k2'], 'b1', false);
    await claimKey(ledger, 'k1', 't1');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 't1',
      state: 'delivered',
      remoteId: 'SIM-1',
      httpStatus: 201,
    });
    expect((await batches.get('b1'))?.delivered).toBe(1);
    expect(await ledger.currentToken('k1')).toBeUndefined();
    await redis.del(`${prefix}:batch:b1`); // the batch record expired
    await claimKey(ledger, 'k2', 't2');
    await settleKey(ledger, {
      orderKey: 'k2',
      batchId: 'b1',
      token: 't2',
      state: 'delivered',
      remoteId: 'SIM-2',
      httpStatus: 201,
    });
    expect(await redis.exists(`${prefix}:batch:b1`)).toBe(0);
    expect((await ledger.get('k2'))?.state).toBe('delivered');
  });

  it('a delivery after a failed attempt clears the earlier code and message', async () => {
    await reserveKeys(ledger, ['k1'], 'b1', false);
    await claimKey(ledger, 'k1', 't1');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 't1',
      state: 'queued',
      httpStatus: 503,
      code: 'HTTP_503',
      message: 'busy',
    });
    await claimKey(ledger, 'k1', 't2');
    await settleKey(ledger, {
      orderKey: 'k1',
      batchId: 'b1',
      token: 't2',
      state: 'delivered',
      remoteId: 'SIM-1',
      httpStatus: 201,
    });
    const entry = await ledger.get('k1');
    expect(entry).toMatchObject({ state: 'delivered', attempts: 2, httpStatus: 201 });
    expect(entry?.code).toBeUndefined();
    expect(entry?.message).toBeUndefined();
  });
});
