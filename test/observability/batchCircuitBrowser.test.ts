/**
 * Issue 36: a held batch is released or cancelled from its dashboard page, as `batch release|cancel` does,
 * recorded with who and why; the buttons are not there read-only. Real Chromium (playwright-core), real
 * Redis, the simulator and a worker.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBatchCircuit } from '../../src/batches/batchCircuit.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { operatorPage } from '../helpers/browser.js';
import { runCli } from '../helpers/runCli.js';

const TOKEN = 'batch-circuit-test-token-0123456789';
/** A product the simulator does not sell: every order naming it is refused 422 PRODUCT_UNKNOWN. */
const UNKNOWN_PRODUCT = 9999;

let rig: DeliveryRig;
let dashboard: RunningDashboard;
let readOnly: RunningDashboard;
let browser: Browser;
let page: Page;
const held: string[] = [];

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const circuitOf = (batchId: string) => readBatchCircuit(rig.services.redis, rig.services.keys, batchId);

beforeAll(async () => {
  // No probe within the test: only a person's action moves the held batches.
  rig = await deliveryRig(
    'batch-circuit-page',
    {},
    { BULKORDER_DASHBOARD_TOKEN: TOKEN, BULKORDER_CANARY_PROBE_MS: '600000' },
  );
  // The batch to release is refused by a gateway fault fixed before the release; the one to cancel
  // names a product the API does not sell.
  rig.simulator.setFaults({
    script: Array.from({ length: 30 }, () => ({
      status: 400,
      path: 'orders' as const,
      body: { code: 'ROUTE_MISSING', message: 'upstream route missing' },
    })),
  });
  for (const name of ['release', 'cancel']) {
    const rows = [HEADER];
    for (let i = 1; i <= 30; i++)
      rows.push(orderRow(`${name}-${i}`, name === 'cancel' ? UNKNOWN_PRODUCT : 5001, 1, 1001 + (i % 3)));
    const imported = await rig.importFile(await rig.writeFile(`${name}.csv`, rows.join('\n') + '\n'));
    // The worker starts once the first file is read: a chunk taken while its batch is still read rests 1.5-2.5 s.
    if (held.length === 0) await rig.startWorker();
    await until(
      `${name} held`,
      () => circuitOf(imported.batchId),
      (c) => c.state === 'held',
    );
    rig.simulator.setFaults({ script: [] });
    held.push(imported.batchId);
  }
  dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
  readOnly = await startDashboard(rig.config, rig.logger, { port: 0, readOnly: true });
  ({ browser, page } = await operatorPage(TOKEN));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await readOnly?.close();
  await rig?.close();
});

describe("a held batch's page in a real browser", () => {
  it('read-only: says the batch is held and how to act, with no buttons', async () => {
    await page.goto(`${readOnly.url}/batches/${held[0]}`);
    expect(await page.textContent('[data-test=batch-circuit]')).toContain('HTTP 400 ROUTE_MISSING');
    expect(await page.locator('[data-test=circuit-form]').count()).toBe(0);
    expect(await page.locator('[data-test=batch-release]').count()).toBe(0);
  }, 60_000);

  it('Release sends the rest (recorded who and why); Cancel ends the other unsent; both leave "Needs a person"', async () => {
    const [toRelease, toCancel] = held as [string, string];
    await page.goto(`${dashboard.url}/open`);
    expect(await page.textContent('[data-test=open-summary]')).toContain('2 open: 2 held batches');
    await page.click(`[data-test=held-batch-link] >> text=batch:${toRelease}`);
    expect(page.url()).toContain(`/batches/${toRelease}`);

    // A post without the page's form token is refused and changes nothing.
    const forged = await page.request.post(`${dashboard.url}/batches/${toRelease}/circuit`, {
      form: { action: 'cancel', why: 'forged', kind: 'orders' },
    });
    expect(forged.status()).toBe(403);
    expect((await circuitOf(toRelease)).state).toBe('held');

    await page.fill('[data-test=circuit-why]', 'catalogue entry added');
    await page.click('[data-test=batch-release]');
    expect(await page.textContent('[role=status]')).toContain(`Released by ops: the rest of batch ${toRelease}`);
    expect(await page.locator('[data-test=circuit-form]').count()).toBe(0);
    expect(await circuitOf(toRelease)).toMatchObject({
      state: 'released',
      action: { kind: 'released', by: 'ops', why: 'catalogue entry added' },
    });

    await page.goto(`${dashboard.url}/batches/${toCancel}`);
    await page.fill('[data-test=circuit-why]', 'wrong catalogue');
    await page.click('[data-test=batch-cancel]');
    expect(await page.textContent('[role=status]')).toContain(
      `Cancelled by ops: every unsent order of batch ${toCancel}`,
    );
    expect(await circuitOf(toCancel)).toMatchObject({
      state: 'cancelled',
      action: { kind: 'cancelled', by: 'ops', why: 'wrong catalogue' },
    });
    const refusedBefore = rig.simulator.counters().errors.PRODUCT_UNKNOWN ?? 0;
    const ended = await until(
      'the cancelled batch ended',
      async () => (await rig.services.batches.get(toCancel))!,
      (b) => b.delivered + b.dead + b.held >= 30,
    );
    expect(ended).toMatchObject({ delivered: 0, dead: 30 });
    // Nothing of the cancelled batch was sent after the click.
    expect(rig.simulator.counters().errors.PRODUCT_UNKNOWN ?? 0).toBe(refusedBefore);

    // The released batch's orders were sent (the gateway was fixed): delivered once each; nothing open.
    await until(
      'the released batch delivered',
      async () => (await rig.services.batches.get(toRelease))!,
      (b) => b.delivered + b.dead + b.held >= 30,
    );
    expect(await rig.services.batches.get(toRelease)).toMatchObject({ delivered: 30, dead: 0, held: 0 });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 30, duplicateOrdersAccepted: 0 });
    const open = await runCli(['open', '--json'], rig.env);
    expect(open.code).toBe(0);
    expect(JSON.parse(open.stdout)).toMatchObject({ total: 0, counts: { batch: 0, dead: 0 } });
    await page.goto(`${dashboard.url}/open`);
    expect(await page.textContent('[data-test=open-summary]')).toContain('Nothing needs a person');
  }, 180_000);
});
