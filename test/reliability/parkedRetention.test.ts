/**
 * Issue 13: dead letters and held records hold recipients' personal data, so they expire
 * (BULKORDER_PARKED_RETENTION_DAYS, default 30); lists show their age and expiry and never a
 * ghost; the ledger entry of a held order stays, without personal data, and still blocks a re-send.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';

const DAY = 24 * 3600 * 1000;
let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('personal data has a lifetime', () => {
  it('dead letters and held records expire after the retention; the held ledger entry stays and blocks a blind re-send', async () => {
    rig = await deliveryRig('parked-ttl', {}, { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300' });
    const { redis, keys, ledger, batches } = rig.services;
    await rig.startWorker({ concurrency: 1 });
    const follow = async (batchId: string) =>
      (await followBatch(batches, batchId, { pollMs: 100, timeoutMs: 25_000, out: devNull() })).batch;

    const refused = await rig.importFile(
      await rig.writeFile('refused.csv', [HEADER, orderRow('TTL-DEAD', 5999)].join('\n') + '\n'),
    );
    expect(await follow(refused.batchId)).toMatchObject({ dead: 1 });
    rig.simulator.setFaults({ script: [{ path: 'orders', status: 200, noAnswer: true, store: true }] });
    const heldFile = await rig.writeFile('held.csv', [HEADER, orderRow('TTL-HELD')].join('\n') + '\n');
    const unanswered = await rig.importFile(heldFile);
    expect(await follow(unanswered.batchId)).toMatchObject({ held: 1 });

    const dead = new ParkedStore(redis, keys, ledger, 'dead');
    const held = new ParkedStore(redis, keys, ledger, 'held');
    const [deadItem] = await dead.select();
    const [heldItem] = await held.select();
    for (const item of [deadItem!, heldItem!]) {
      const ttl = await redis.pttl(keys.parked(item.record.kind, item.record.key));
      expect(ttl).toBeGreaterThan(29 * DAY);
      expect(ttl).toBeLessThanOrEqual(30 * DAY);
      expect(item.expiresAt).toBe(item.record.parkedAt + 30 * DAY);
    }
    const heldEntryKey = keys.ledger(heldItem!.record.key);
    expect(await redis.pttl(heldEntryKey)).toBe(-1);
    expect(JSON.stringify(await redis.hgetall(heldEntryKey))).not.toMatch(/anna|Keizersgracht|\+316/i);

    // The lists show age and expiry.
    const listed = await runCli(['review', 'list'], rig.env);
    expect(listed.code).toBe(0);
    expect(listed.output).toMatch(/AGE\s+EXPIRES IN/);
    expect(listed.output).toMatch(/\s30d\s/);
    expect(listed.output).toMatch(/kept 30 days after it was parked/);

    // 31 days later (the records' own TTL does the same; prune is what every read runs first).
    const later = Date.now() + 31 * DAY;
    await Promise.all([dead.prune(later), held.prune(later)]);
    expect(
      await redis.exists(keys.parked('dead', deadItem!.record.key), keys.parked('held', heldItem!.record.key)),
    ).toBe(0);
    expect([await dead.count(), await held.count()]).toEqual([0, 0]);
    expect(await ledger.get(heldItem!.record.key)).toMatchObject({ state: 'held' });
    const again = await rig.importFile(heldFile);
    expect(again.counts).toMatchObject({ enqueued: 0, skippedHeld: 1 });
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(1);
    recordReliability({
      fault: 'dead letter and held record 31 days old (BULKORDER_PARKED_RETENTION_DAYS=30)',
      behaviour:
        'records (personal data) expired and left the lists; the held ledger entry stayed and the re-import did not send it',
      orders: 2,
      lost: 0,
      duplicates: counters.duplicateOrdersAccepted,
      held: 1,
    });
  }, 90_000);

  it('a record parked before records had an expiry is pruned by age, and the index never lists a ghost', async () => {
    rig = await deliveryRig('parked-legacy');
    const { redis, keys, ledger } = rig.services;
    const store = new ParkedStore(redis, keys, ledger, 'dead');
    const old = Date.now() - 40 * DAY;
    await redis.set(
      keys.parked('dead', 'ref:LEGACY'),
      JSON.stringify({
        kind: 'dead',
        key: 'ref:LEGACY',
        parkedAt: old,
        batchId: 'b',
        file: 'f.csv',
        lines: [2],
        cells: [['x']],
        payload: {},
        attempts: 1,
        reason: 'r',
      }),
    );
    await redis.zadd(keys.parkedIndex('dead'), old, 'ref:LEGACY');
    await redis.zadd(keys.parkedIndex('dead'), Date.now(), 'ref:GHOST'); // its record already expired
    expect(await store.select()).toEqual([]);
    expect(await store.count()).toBe(0);
    expect(await redis.exists(keys.parked('dead', 'ref:LEGACY'))).toBe(0);
  });
});

function devNull(): NodeJS.WriteStream {
  return { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream;
}
