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
    expect(await rig.services.batches.get(imported.batchId)).toMatchObject({ delivered: 1, held: 1 });
    expect(await rig.services.redis.zcard(rig.services.keys.parkedIndex('held'))).toBe(0);

    const again = await rig.importFile(file);
    expect(again.counts).toMatchObject({ skippedDelivered: 2, enqueued: 0 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });
    expect((await cli(rig, ['review', 'release', '--all'])).output).toMatch(/nothing matched/);
  }, 90_000); // five real CLI processes and a --wait: 15 s alone, more beside other test files
});
