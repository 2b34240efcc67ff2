/**
 * Issue 33: every fix closes what it fixed, and `bulkorder open` lists what is still open. Real Redis,
 * the simulator on port 0, real workers and the real CLI; counts from the simulator, not the ledger.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/runCli.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, settleBatch, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('a fix closes what it fixed; open lists what is left (issue 33)', () => {
  it('export -> fix the customer id -> import: the fixed orders are delivered, their dead letters closed as superseded, the first batch cleared, open empty', async () => {
    rig = await deliveryRig('close-export', { faults: { forbiddenCustomers: [1009] } });
    const rows = [HEADER, orderRow('OK-1'), orderRow('OK-2')];
    for (let i = 1; i <= 3; i++) rows.push(orderRow(`WRONG-${i}`, 5001, 1, 1009));
    const file = await rig.writeFile('night.csv', rows.join('\n') + '\n');
    const first = await rig.importFile(file);
    await rig.startWorker({ concurrency: 2 }); // once the file is read: its chunks go at once
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ delivered: 2, dead: 3 });

    const before = await runCli(['open', '--json'], rig.env);
    expect(before.code).toBe(4);
    const listed = JSON.parse(before.stdout) as {
      total: number;
      counts: Record<string, number>;
      groups: { kind: string; count: number; action: string }[];
    };
    expect(listed).toMatchObject({ total: 3, counts: { dead: 3, held: 0, file: 0 } });
    expect(listed.groups).toEqual([expect.objectContaining({ kind: 'dead', count: 3 })]);
    expect(listed.groups[0]!.action).toContain('dead-letters retry');
    expect((await runCli(['status'], rig.env)).stdout).toMatch(/Needs a person: 3 open \(3 dead letters\)/);

    const fix = join(rig.dir, 'fix.csv');
    expect((await runCli(['dead-letters', 'export', '--out', fix], rig.env)).code).toBe(0);
    const exported = await readFile(fix, 'utf8');
    expect(exported).toContain('reject_key');
    await writeFile(fix, exported.replaceAll(',1009,', ',1002,'));
    const second = await rig.importFile(fix);
    expect(second.counts).toMatchObject({ valid: 3, enqueued: 3 });
    expect(await settleBatch(rig, second.batchId)).toMatchObject({ delivered: 3, dead: 0 });

    // The first batch: its 3 dead letters are resolved, superseded by the second batch's orders.
    const cleared = await rig.services.batches.get(first.batchId);
    expect(cleared).toMatchObject({ delivered: 2, dead: 0, held: 0, resolved: 3 });
    const fixes = await rig.services.batches.fixes(first.batchId);
    expect(fixes).toHaveLength(3);
    for (const f of fixes) expect(f).toMatchObject({ was: 'dead', how: 'superseded', batch: second.batchId });
    expect(new Set(fixes.map((f) => f.by))).toEqual(
      new Set(['ref.1002.WRONG-1', 'ref.1002.WRONG-2', 'ref.1002.WRONG-3']),
    );
    expect(await rig.services.redis.zcard(rig.services.keys.parkedIndex('dead'))).toBe(0);

    const after = await runCli(['open'], rig.env);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/Nothing needs a person/);
    expect((await runCli(['status', '--json'], rig.env)).stdout).toMatch(/"open": \{\s+"total": 0/);
    expect((await runCli(['status'], rig.env)).stdout).toMatch(/Needs a person: nothing open/);

    // Nothing lost, nothing sent twice: the simulator's own counts.
    const counters = rig.simulator.counters();
    expect(counters).toMatchObject({ ordersAccepted: 5, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: '3 of 5 orders refused 403 UNKNOWN_CUSTOMER; dead letters exported, customer id fixed, imported again',
      behaviour:
        'the 3 fixed orders delivered once; their dead letters closed as superseded, the first batch counts them resolved, `open` is empty',
      orders: 5,
      lost: 5 - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 90_000);

  it('dead-letters retry closes the dead letter in the batch it came from; open ack sets an item aside with who and why', async () => {
    rig = await deliveryRig('close-retry', {
      faults: {
        script: [{ path: 'orders', status: 400, body: { code: 'UPSTREAM_BROKEN', message: 'catalogue offline' } }],
      },
    });
    const file = await rig.writeFile('r.csv', [HEADER, orderRow('R-1'), orderRow('R-2', 5999)].join('\n') + '\n');
    const first = await rig.importFile(file);
    await rig.startWorker({ concurrency: 1 }); // once the file is read: its chunks go at once
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ delivered: 0, dead: 2 });

    const retried = await runCli(['dead-letters', 'retry', '--all', '--wait', '--timeout', '30'], rig.env);
    expect(retried.output).toMatch(/1 delivered, 1 dead-lettered/);
    // R-1 delivered: resolved in the first batch; R-2 (unknown product) refused again: passed on to the retry's batch.
    expect(await rig.services.batches.get(first.batchId)).toMatchObject({ dead: 0, resolved: 1, movedOn: 1 });
    const open = JSON.parse((await runCli(['open', '--json'], rig.env)).stdout) as {
      total: number;
      groups: { items: { id: string; batchId: string }[] }[];
    };
    expect(open.total).toBe(1);
    const item = open.groups[0]!.items[0]!;
    expect(item.id).toBe('dead:ref.1001.R-2');
    expect(item.batchId).not.toBe(first.batchId);

    expect((await runCli(['open', 'ack', item.id], rig.env)).code).toBe(2); // --note is required
    expect((await runCli(['open', 'ack', 'dead:nope', '--note', 'x'], rig.env)).code).toBe(2);
    const acked = await runCli(['open', 'ack', item.id, '--by', 'anna', '--note', 'product withdrawn'], rig.env);
    expect(acked.code).toBe(0);
    const after = await runCli(['open', '--json'], rig.env);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({
      total: 0,
      acknowledged: [
        expect.objectContaining({
          id: item.id,
          ack: expect.objectContaining({ by: 'anna', note: 'product withdrawn' }),
        }),
      ],
    });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
  }, 90_000);

  it('a re-run of an unchanged file POSTs nothing: its refused orders are reported as the same open dead letters (exit 0: no news); --retry-refused sends them again', async () => {
    rig = await deliveryRig('close-rerun', { faults: { forbiddenCustomers: [1009] } });
    const file = await rig.writeFile(
      'nightly.csv',
      [HEADER, orderRow('N-1'), orderRow('N-2', 5001, 1, 1009)].join('\n') + '\n',
    );
    const first = await rig.importFile(file);
    await rig.startWorker({ concurrency: 1 }); // once the file is read: its chunks go at once
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ delivered: 1, dead: 1 });
    const posts = rig.simulator.counters().apiRequests.business;

    const rerun = await runCli(['import', file, '--json'], rig.env);
    expect(rerun.code).toBe(0);
    const json = JSON.parse(rerun.stdout) as {
      counts: Record<string, number>;
      refusedBefore: unknown[];
      exitCode: number;
    };
    expect(json.counts).toMatchObject({ enqueued: 0, skippedDelivered: 1, skippedRefused: 1 });
    expect(json.refusedBefore).toEqual([{ orderKey: 'ref.1009.N-2', batchId: first.batchId }]);
    const text = await runCli(['import', file], rig.env);
    expect(text.output).toContain(
      'already known: 1 refused before with the same content, not sent again: the same open dead letters as before (ref.1009.N-2 (batch',
    );
    expect(rig.simulator.counters().apiRequests.business).toBe(posts); // nothing POSTed
    expect(JSON.parse((await runCli(['open', '--json'], rig.env)).stdout)).toMatchObject({ total: 1 });

    const retried = await runCli(['import', file, '--retry-refused', '--wait', '--timeout', '30'], rig.env);
    expect(retried.output).toMatch(/queued 1/);
    expect(rig.simulator.counters().apiRequests.business).toBe(posts + 1);
    // Refused again: still one open dead letter (the new batch's), the first batch passes it on.
    expect(await rig.services.batches.get(first.batchId)).toMatchObject({ dead: 0, movedOn: 1 });
    expect(JSON.parse((await runCli(['open', '--json'], rig.env)).stdout)).toMatchObject({ total: 1 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
  }, 90_000);
});
