import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { runCli } from '../helpers/runCli.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

async function cli(r: DeliveryRig, args: string[]): Promise<{ code: number | string; output: string }> {
  const { code, output } = await runCli(args, r.env);
  return { code, output };
}

describe('review of held orders (real Redis, simulator, workers, the real CLI)', () => {
  it('release sends an order that is not on the service; resolve --delivered records one that is, and it is never sent again', async () => {
    // Two orders sent without an answer: the simulator stored one of them, not the other.
    rig = await deliveryRig(
      'review',
      {
        faults: {
          script: [
            { path: 'orders', status: 200, noAnswer: true, store: true },
            { path: 'orders', status: 200, noAnswer: true, store: false },
          ],
        },
      },
      { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300' },
    );
    const file = await rig.writeFile('held.csv', [HEADER, orderRow('H-1'), orderRow('H-2')].join('\n') + '\n');
    await rig.startWorker({ concurrency: 1 });
    const imported = await rig.importFile(file);
    const { batch } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 50,
      timeoutMs: 20_000,
      out: quiet,
    });
    expect(batch).toMatchObject({ held: 2, delivered: 0 });
    const stored = rig.simulator.orders().map((o) => (o.payload as OrderPayload).recipient.email);
    expect(stored).toHaveLength(1);
    const [there, missing] = stored[0]!.includes('h-1')
      ? ['ref.1001.H-1', 'ref.1001.H-2']
      : ['ref.1001.H-2', 'ref.1001.H-1'];

    const listed = await cli(rig, ['review', 'list']);
    expect(listed.output).toMatch(/2 held orders match/);
    expect(listed.output).toContain(there);

    expect((await cli(rig, ['review', 'resolve', there])).code).toBe(2); // --delivered is required
    const resolved = await cli(rig, [
      'review',
      'resolve',
      there,
      '--delivered',
      '--remote-id',
      'ORD-77',
      '--by',
      'anna',
      '--note',
      'seen in the portal',
    ]);
    expect(resolved.output).toMatch(/resolved as delivered by anna: 1 order/);
    expect(await rig.services.ledger.get(there)).toMatchObject({
      state: 'delivered',
      remoteId: 'ORD-77',
      review: { action: 'resolved', by: 'anna', note: 'seen in the portal' },
    });

    const released = await cli(rig, ['review', 'release', missing, '--wait', '--timeout', '20', '--by', 'bert']);
    expect(released.output).toMatch(/1 delivered, 0 dead-lettered, 0 held/);
    expect(released.code).toBe(0);
    expect(await rig.services.ledger.get(missing)).toMatchObject({
      state: 'delivered',
      review: { action: 'released', by: 'bert' },
    });
    // Issue 33: the batch that held them no longer counts them held: one resolved as delivered, one released
    // (and delivered by the release's batch); its history says who did what, where.
    expect(await rig.services.batches.get(imported.batchId)).toMatchObject({ delivered: 1, held: 0, resolved: 1 });
    const fixes = await rig.services.batches.fixes(imported.batchId);
    expect(fixes.map((f) => [f.key, f.how, f.by])).toEqual([
      [missing, 'released', 'bert'],
      [there, 'resolved', 'anna'],
    ]);
    expect(fixes[0]!.batch).not.toBe(imported.batchId);
    expect(await rig.services.redis.zcard(rig.services.keys.parkedIndex('held'))).toBe(0);

    const again = await rig.importFile(file);
    expect(again.counts).toMatchObject({ skippedDelivered: 2, enqueued: 0 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });
    expect((await cli(rig, ['review', 'release', '--all'])).output).toMatch(/nothing matched/);
  }, 90_000); // five real CLI processes and a --wait: 15 s alone, more beside other test files

  it('review purge, as review list advertises: the held record (its personal data) goes, the ledger keeps the key held, and nothing sends it', async () => {
    rig = await deliveryRig(
      'review-purge',
      { faults: { script: [{ path: 'orders', status: 200, noAnswer: true, store: true }] } },
      { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300' },
    );
    const file = await rig.writeFile('held.csv', [HEADER, orderRow('P-1'), orderRow('P-2')].join('\n') + '\n');
    await rig.startWorker({ concurrency: 1 });
    const imported = await rig.importFile(file);
    const { batch } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 50,
      timeoutMs: 20_000,
      out: quiet,
    });
    expect(batch).toMatchObject({ held: 1, delivered: 1 });
    const heldKey = (await rig.services.redis.zrange(rig.services.keys.parkedIndex('held'), '0', '-1'))[0]!;
    expect((await cli(rig, ['review', 'list'])).output).toContain('purge removes it sooner');
    // --json: one object, as README says of every --json (not a bare array), like dead-letters list.
    const listed = JSON.parse((await runCli(['review', 'list', '--json'], rig.env)).stdout) as Record<string, unknown>;
    expect(listed).toMatchObject({ kind: 'orders', list: 'held', matched: 1, total: 1, shown: 1, exitCode: 0 });
    expect(listed.records).toEqual([expect.objectContaining({ key: heldKey, kind: 'held' })]);

    expect((await cli(rig, ['review', 'purge'])).code).toBe(2); // a key, a filter or --all
    const purged = await runCli(['review', 'purge', heldKey, '--json'], rig.env);
    expect(purged.code).toBe(0);
    expect(JSON.parse(purged.stdout)).toMatchObject({ action: 'review purge', matched: 1, purged: 1, exitCode: 0 });
    expect(await rig.services.redis.zcard(rig.services.keys.parkedIndex('held'))).toBe(0);
    expect(await rig.services.ledger.get(heldKey)).toMatchObject({ state: 'held' });
    expect((await cli(rig, ['review', 'list'])).output).toMatch(/no held orders/);

    // Imported again: the purged order stays held (it may exist on the service), the other is already delivered.
    const again = await rig.importFile(file);
    expect(again.counts).toMatchObject({ skippedHeld: 1, skippedDelivered: 1, enqueued: 0 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });
  }, 60_000);
});
