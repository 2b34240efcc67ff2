import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { queueStatus } from '../../src/services/queueStatus.js';
import { importAndFollow } from '../../src/importer/importAndFollow.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { BREAKER_STAYS_OPEN } from '../helpers/breakerSettings.js';
import { waitFor } from '../helpers/cliProcess.js';
import { startDashboard } from '../../src/dashboard/startDashboard.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A stream that keeps what `import --wait` prints. */
function captured(): NodeJS.WriteStream {
  return { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;
}

describe('what the breaker sees, said where people look', () => {
  it('most attempts answered 5xx (mixed statuses) but the breaker closed: status and import --wait say the API is failing', async () => {
    // A long window, so a slow machine's run stays inside it; opening needs every attempt failing (never, with
    // 25% answered), so the breaker stays closed and "failing" starts at half of that (50%).
    rig = await deliveryRig(
      'degraded',
      { seed: 7 },
      { BULKORDER_BREAKER_WINDOW_MS: '600000', BULKORDER_BREAKER_SERVER_FAILING_PERCENT: '100' },
    );
    rig.simulator.setFaults({ serverErrorRate: 0.75 });
    const first = await rig.importFile(await rig.writeFile('first.csv', ordersCsv('DG', 40)));
    // Started here, not by the rig: this test stops it itself. Once the file is read, as in every test here: a
    // worker that takes a job of a batch still being read waits 1.5-2.5 s to ask again (batchGate-4.lua).
    const worker = await startBusinessDelivery(rig.config, rig.logger, {
      prefix: rig.prefix,
      delivery: rig.config.delivery,
    });
    await followBatch(rig.services.batches, first.batchId, { timeoutMs: 60_000, out: captured() });
    await worker.close();

    const status = await queueStatus(rig.services, {});
    expect(status).toContain('circuit breaker closed');
    expect(status).toMatch(/API failing: \d+% 5xx or no answer in the last 600 s \(5\d\d x\d+, /);
    const json = JSON.parse(await queueStatus(rig.services, { json: true })) as {
      breaker: { state: string; degraded?: { failures: number; attempts: number; share: number } };
    };
    expect(json.breaker.state).toBe('closed');
    expect(json.breaker.degraded!.failures).toBeGreaterThanOrEqual(5);
    expect(json.breaker.degraded!.share).toBeGreaterThanOrEqual(0.5);

    // No worker now: --max-wait runs out, and the reason is the failing API, not "still being delivered".
    const second = await rig.writeFile('second.csv', ordersCsv('DH', 2));
    const outcome = await importAndFollow(
      second,
      { force: false },
      { services: rig.services, logger: rig.logger },
      {
        wait: true,
        timeoutMs: 1000,
        out: captured(),
      },
    );
    expect(outcome.exitCode).toBe(5);
    expect(outcome.report).toMatch(/gave up waiting after 1 s \(--max-wait\): API failing: \d+% 5xx or no answer/);
    expect(outcome.report).not.toContain('still being delivered');
  }, 90_000);

  it('an open breaker says what waits', async () => {
    rig = await deliveryRig(
      'open-view',
      {},
      {
        BULKORDER_BREAKER_MIN_ATTEMPTS: '1',
        BULKORDER_BREAKER_MIN_ORDERS: '1',
        BULKORDER_BREAKER_SERVER_FAILING_PERCENT: '10',
        ...BREAKER_STAYS_OPEN,
      },
    );
    rig.simulator.setFaults({
      script: [{ status: 503, body: { code: 'MAINTENANCE', message: 'down' }, path: 'orders' }],
    });
    await rig.importFile(await rig.writeFile('open.csv', ordersCsv('OV', 3)));
    await rig.startWorker();
    let status = '';
    await waitFor(
      async () => /circuit breaker OPEN/.test((status = await queueStatus(rig!.services, {}))),
      'the open breaker',
    );
    // How many of the 3 orders were answered 503 before it opened depends on the machine's scheduling.
    expect(status, status).toMatch(/circuit breaker OPEN since .*server failing: 503 x[1-3] .*next trial at \d{4}-/);
    expect(status).toMatch(/\n {2}waiting: \d+ jobs in the queue/);
  });

  it('during an outage the batch page says what its orders wait for (not "None."), and status calls dead letters only what is dead-lettered', async () => {
    rig = await deliveryRig(
      'outage-page',
      {},
      {
        BULKORDER_BREAKER_MIN_ATTEMPTS: '1',
        BULKORDER_BREAKER_MIN_ORDERS: '1',
        BULKORDER_BREAKER_SERVER_FAILING_PERCENT: '10',
        ...BREAKER_STAYS_OPEN,
      },
    );
    rig.simulator.setFaults({ serverErrorRate: 1 }); // an outage: every order answered 5xx, none stored
    const { batchId } = await rig.importFile(await rig.writeFile('outage.csv', ordersCsv('OU', 3)));
    await rig.startWorker();
    await waitFor(async () => /circuit breaker OPEN/.test(await queueStatus(rig!.services, {})), 'the open breaker');
    // While open, every failure of the trip's kind joins the breaker's burst (recordFailure-7.lua): a 5xx
    // retried, a timeout held for review. None of them is a dead letter, and closing sends none of them.
    await rig.services.redis.sadd(rig.services.keys.breakerBurst, 'ref.1001.OU-1', 'ref.1001.OU-2', 'ref.1001.OU-3');
    const status = await queueStatus(rig.services, {});
    expect(status).not.toMatch(/dead letters? of the burst/);
    const json = JSON.parse(await queueStatus(rig.services, { json: true })) as {
      breaker: { waiting: { burst: number } };
    };
    expect(json.breaker.waiting.burst).toBe(0);

    const dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
    try {
      const html = await (await fetch(`${dashboard.url}/batches/${encodeURIComponent(batchId)}`)).text();
      expect(html).not.toMatch(/data-test="parked-empty">None\.</);
      expect(html).toMatch(/None so far: 3 of 3 still to be delivered\. They wait:/);
      expect(html).toContain('Circuit breaker OPEN');
      expect(html).toMatch(
        /<li>circuit breaker OPEN since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d: server failing/,
      );
      expect(html).not.toContain('dead letters go back');
    } finally {
      await dashboard.close();
    }
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 0, duplicateOrdersAccepted: 0 });
  });
});
