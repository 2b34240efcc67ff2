/**
 * A 2xx whose body says it is an error (issue 37: "a 200 whose body is an error, stored by nobody,
 * was recorded delivered"): held for review as ERROR_BODY_2XX with the body kept, never delivered.
 * Real Redis, a real worker, the simulator answering scripted 200s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { runCli } from '../helpers/runCli.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

describe('an error-shaped 2xx', () => {
  it('is held for review with its body (ERROR_BODY_2XX), not recorded delivered; an ordinary 2xx still is', async () => {
    const errorAnswers = 3;
    rig = await deliveryRig('error-body', {
      faults: {
        script: [
          { path: 'orders', status: 200, body: { code: 'ORDER_FAILED', message: 'stock service down' } },
          { path: 'orders', status: 200, body: { error: 'internal' } },
          { path: 'orders', status: 202, body: { errors: [{ code: 'X1', message: 'queue full' }] } },
        ],
      },
    });
    const file = await rig.writeFile('orders.csv', ordersCsv('E', 5));
    await rig.startWorker({ concurrency: 1 });
    const imported = await rig.importFile(file);
    const { batch } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 50,
      timeoutMs: 60_000,
      out: quiet,
    });
    expect(batch).toMatchObject({ delivered: 2, held: errorAnswers, dead: 0 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });

    const listed = await runCli(['review', 'list', '--json'], rig.env);
    const records = (JSON.parse(listed.stdout) as { records: { code: string; httpStatus: number; body: unknown }[] })
      .records;
    expect(records).toHaveLength(errorAnswers);
    expect(records.map((r) => r.code)).toEqual(Array(errorAnswers).fill('ERROR_BODY_2XX'));
    expect(records.map((r) => r.body)).toEqual(
      expect.arrayContaining([{ code: 'ORDER_FAILED', message: 'stock service down' }, { error: 'internal' }]),
    );
    recordReliability({
      fault: 'the API answers 2xx with an error body (`{"code":…}`, `{"error":…}`, `{"errors":[…]}`) and no order id',
      behaviour:
        'held for review as ERROR_BODY_2XX with the body kept (BULKORDER_ERROR_BODY_FIELDS); never recorded delivered',
      orders: 5,
      lost: 5 - batch.delivered - batch.held - batch.dead,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 120_000);
});
