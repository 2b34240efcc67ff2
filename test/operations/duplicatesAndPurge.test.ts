/**
 * Issue 33: possible duplicates are listed and acknowledged in bulk (`review duplicates`), purges close what they
 * purge on the batch it came from, and an unchanged re-run's exit code with --wait. Real Redis, the simulator on
 * port 0, real workers and the real CLI; counts from the simulator, not the ledger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/runCli.js';
import { deliveryRig, HEADER, orderRow, settleBatch, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

interface DuplicatesJson {
  total: number;
  duplicates: { orderKey: string; batchId: string; cause: string; status?: number; code?: string }[];
  exitCode: number;
}

describe('review duplicates, purges and re-runs close the loop (issue 33)', () => {
  it('a delivery after a 502 is listed as a possible duplicate with its cause, in open too; ack --batch records who and why and clears both', async () => {
    rig = await deliveryRig('dup-ack', {
      faults: {
        script: [{ path: 'orders', status: 502, body: { code: 'BAD_GATEWAY', message: 'upstream closed' } }],
      },
    });
    const file = await rig.writeFile('d.csv', [HEADER, orderRow('D-1'), orderRow('D-2')].join('\n') + '\n');
    await rig.startWorker({ concurrency: 1 });
    const first = await rig.importFile(file);
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ delivered: 2, dead: 0, possibleDuplicates: 1 });

    const listed = await runCli(['review', 'duplicates', 'list', '--json'], rig.env);
    expect(listed.code).toBe(4);
    const json = JSON.parse(listed.stdout) as DuplicatesJson;
    expect(json.total).toBe(1);
    expect(json.duplicates[0]).toMatchObject({ batchId: first.batchId, status: 502, code: 'BAD_GATEWAY' });
    expect(json.duplicates[0]!.cause).toContain('HTTP 502 BAD_GATEWAY');
    const key = json.duplicates[0]!.orderKey;
    const text = await runCli(['review', 'duplicates', 'list'], rig.env);
    expect(text.stdout).toContain(key);
    expect(text.stdout).toContain(first.batchId);

    const open = JSON.parse((await runCli(['open', '--json'], rig.env)).stdout) as {
      total: number;
      counts: Record<string, number>;
      groups: { kind: string; action: string; items: { id: string }[] }[];
    };
    expect(open).toMatchObject({ total: 1, counts: { duplicate: 1, dead: 0 } });
    expect(open.groups[0]!.items[0]!.id).toBe(`duplicate:${key}`);
    expect(open.groups[0]!.action).toContain(`review duplicates ack --batch ${first.batchId}`);
    expect((await runCli(['status'], rig.env)).stdout).toMatch(/Needs a person: 1 open \(1 possible duplicate\)/);

    // --why is required; a selection is required.
    expect((await runCli(['review', 'duplicates', 'ack', '--batch', first.batchId], rig.env)).code).toBe(2);
    expect((await runCli(['review', 'duplicates', 'ack', '--why', 'x'], rig.env)).code).toBe(2);
    // Another batch's ack touches nothing of this one.
    const other = await runCli(['review', 'duplicates', 'ack', '--batch', 'b-none', '--why', 'x', '--json'], rig.env);
    expect(JSON.parse(other.stdout)).toMatchObject({ acknowledged: [], exitCode: 0 });
    expect(JSON.parse((await runCli(['review', 'duplicates', 'list', '--json'], rig.env)).stdout)).toMatchObject({
      total: 1,
    });

    const acked = await runCli(
      [
        'review',
        'duplicates',
        'ack',
        '--batch',
        first.batchId,
        '--by',
        'anna',
        '--why',
        'checked the portal: one copy',
      ],
      rig.env,
    );
    expect(acked.code).toBe(0);
    expect(acked.stdout).toContain('acknowledged by anna: 1 possible duplicate');

    const after = await runCli(['review', 'duplicates', 'list', '--json'], rig.env);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ total: 0, duplicates: [] });
    const openAfter = await runCli(['open', '--json'], rig.env);
    expect(openAfter.code).toBe(0);
    expect(JSON.parse(openAfter.stdout)).toMatchObject({ total: 0, counts: { duplicate: 0 } });
    expect((await runCli(['status'], rig.env)).stdout).toMatch(/Needs a person: nothing open/);

    // The batch's history of fixes: which order, who, why, when.
    const fixes = await rig.services.batches.fixes(first.batchId);
    expect(fixes).toEqual([
      expect.objectContaining({
        key,
        was: 'duplicate',
        how: 'acknowledged',
        batch: first.batchId,
        by: 'anna',
        note: 'checked the portal: one copy',
      }),
    ]);
    expect(fixes[0]!.at).toBeGreaterThan(0);
    expect(await rig.services.redis.zcard(rig.services.keys.duplicates)).toBe(0);
    expect(await rig.services.redis.hlen(rig.services.keys.duplicateInfo)).toBe(0);
    // The simulator's own counts: a scripted 502 stores nothing, so nothing was lost or sent twice.
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });
  }, 90_000);

  it('open ack duplicate:<key> closes it as review duplicates ack does (off its list, who and why in the batch); one acknowledged the old way is carried over', async () => {
    rig = await deliveryRig('dup-open-ack');
    await rig.startWorker({ concurrency: 1 });
    const flagged = async (name: string, ref: string, status: number): Promise<string> => {
      rig!.simulator.setFaults({ script: [{ path: 'orders', status, body: { code: 'UPSTREAM', message: 'closed' } }] });
      const imported = await rig!.importFile(await rig!.writeFile(name, [HEADER, orderRow(ref)].join('\n') + '\n'));
      expect(await settleBatch(rig!, imported.batchId)).toMatchObject({ delivered: 1, possibleDuplicates: 1 });
      return imported.batchId;
    };
    const a = await flagged('a.csv', 'A-1', 502);
    const b = await flagged('b.csv', 'B-1', 503);
    const listed = JSON.parse(
      (await runCli(['review', 'duplicates', 'list', '--json'], rig.env)).stdout,
    ) as DuplicatesJson;
    expect(listed.total).toBe(2);
    const keyOf = (batchId: string) => listed.duplicates.find((d) => d.batchId === batchId)!.orderKey;
    // B's was acknowledged by `open ack` before it closed duplicates itself: only in the open list's own store.
    const { redis, keys } = rig.services;
    await redis.hset(
      keys.openAcks,
      `duplicate:${keyOf(b)}`,
      JSON.stringify({ by: 'old', note: 'seen before', at: 1_000 }),
    );

    const acked = await runCli(
      ['open', 'ack', `duplicate:${keyOf(a)}`, '--by', 'anna', '--note', 'checked the portal: one copy', '--json'],
      rig.env,
    );
    expect(acked.code).toBe(0);

    const after = await runCli(['review', 'duplicates', 'list', '--json'], rig.env);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ total: 0, duplicates: [] });
    expect(await rig.services.batches.fixes(a)).toEqual([
      expect.objectContaining({
        key: keyOf(a),
        was: 'duplicate',
        how: 'acknowledged',
        by: 'anna',
        note: 'checked the portal: one copy',
      }),
    ]);
    expect(await rig.services.batches.fixes(b)).toEqual([
      expect.objectContaining({
        key: keyOf(b),
        was: 'duplicate',
        how: 'acknowledged',
        by: 'old',
        note: 'seen before',
        at: 1_000,
      }),
    ]);
    expect(JSON.parse(acked.stdout)).toMatchObject({
      action: 'open ack',
      by: 'anna',
      acknowledged: [`duplicate:${keyOf(a)}`],
      closed: [`duplicate:${keyOf(a)}`],
      missing: [],
    });
    // Closed, not set aside: nothing open, nothing under open's "acknowledged", nothing left in its store.
    const open = await runCli(['open', '--json'], rig.env);
    expect(open.code).toBe(0);
    expect(JSON.parse(open.stdout)).toMatchObject({ total: 0, counts: { duplicate: 0 }, acknowledged: [] });
    expect(await redis.hlen(keys.openAcks)).toBe(0);
    // Again: no longer open, refused as any unknown id.
    expect((await runCli(['open', 'ack', `duplicate:${keyOf(a)}`, '--note', 'x'], rig.env)).code).toBe(2);
  }, 90_000);

  it('dead-letters purge: the batch no longer counts the dead letter open (resolved, a purged fix), open is empty', async () => {
    rig = await deliveryRig('dup-purge', { faults: { forbiddenCustomers: [1009] } });
    const file = await rig.writeFile(
      'p.csv',
      [HEADER, orderRow('P-1'), orderRow('P-2', 5001, 1, 1009)].join('\n') + '\n',
    );
    await rig.startWorker({ concurrency: 1 });
    const first = await rig.importFile(file);
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ delivered: 1, dead: 1 });
    const before = JSON.parse((await runCli(['batch', 'show', first.batchId, '--json'], rig.env)).stdout) as Record<
      string,
      unknown
    >;
    expect(JSON.stringify(before)).toMatch(/"dead": ?1/);

    const purged = await runCli(['dead-letters', 'purge', '--all', '--json'], rig.env);
    expect(purged.code).toBe(0);
    expect(JSON.parse(purged.stdout)).toMatchObject({ purged: 1 });
    expect(await rig.services.batches.get(first.batchId)).toMatchObject({ delivered: 1, dead: 0, resolved: 1 });
    const shown = JSON.stringify(
      JSON.parse((await runCli(['batch', 'show', first.batchId, '--json'], rig.env)).stdout) as unknown,
    );
    expect(shown).toMatch(/"dead": ?0/);
    expect(await rig.services.batches.fixes(first.batchId)).toEqual([
      expect.objectContaining({ key: 'ref.1009.P-2', was: 'dead', how: 'purged', batch: first.batchId }),
    ]);
    const open = await runCli(['open', '--json'], rig.env);
    expect(open.code).toBe(0);
    expect(JSON.parse(open.stdout)).toMatchObject({ total: 0 });
    expect((await runCli(['status'], rig.env)).stdout).toMatch(/Needs a person: nothing open/);
    // Purging again changes nothing (counted once).
    expect(
      JSON.parse((await runCli(['dead-letters', 'purge', 'ref.1009.P-2', '--json'], rig.env)).stdout),
    ).toMatchObject({ purged: 0 });
    expect(await rig.services.batches.get(first.batchId)).toMatchObject({ dead: 0, resolved: 1 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
  }, 90_000);

  it('import --wait of an unchanged file whose only non-delivered order was refused before: POSTs nothing, exits 0', async () => {
    rig = await deliveryRig('dup-rerun', { faults: { forbiddenCustomers: [1009] } });
    const file = await rig.writeFile(
      'n.csv',
      [HEADER, orderRow('N-1'), orderRow('N-2', 5001, 1, 1009)].join('\n') + '\n',
    );
    await rig.startWorker({ concurrency: 1 });
    const first = await rig.importFile(file);
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ delivered: 1, dead: 1 });
    const posts = rig.simulator.counters().apiRequests.business;

    const rerun = await runCli(['import', file, '--wait', '--timeout', '30', '--json'], rig.env);
    const json = JSON.parse(rerun.stdout) as { counts: Record<string, number>; exitCode: number };
    expect(json.counts).toMatchObject({ enqueued: 0, skippedDelivered: 1, skippedRefused: 1 });
    expect(json.exitCode).toBe(0);
    expect(rerun.code).toBe(0);
    const text = await runCli(['import', file, '--wait', '--timeout', '30'], rig.env);
    expect(text.code).toBe(0);
    expect(text.output).toContain('refused before with the same content');
    expect(rig.simulator.counters().apiRequests.business).toBe(posts);
    // Still one open dead letter, the first batch's.
    expect(JSON.parse((await runCli(['open', '--json'], rig.env)).stdout)).toMatchObject({ total: 1 });
  }, 90_000);
});
