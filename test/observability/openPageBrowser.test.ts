/**
 * Issue 33: the dashboard's "Needs a person" page shows what `bulkorder open` lists, acknowledges items with
 * who and why (a possible duplicate as `review duplicates ack` does), and empties as fixes close them; a batch page shows what was fixed, where, by whom. Real
 * Chromium (playwright-core), real Redis, the simulator and a worker.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { deliveryRig, HEADER, orderRow, settleBatch, type DeliveryRig } from '../helpers/deliveryRig.js';
import { operatorPage } from '../helpers/browser.js';
import { runCli } from '../helpers/runCli.js';

const TOKEN = 'open-page-test-token-0123456789';

let rig: DeliveryRig;
let dashboard: RunningDashboard;
let browser: Browser;
let page: Page;
let heldBatch: string;

async function importAndSettle(name: string, rows: string[]): Promise<string> {
  const file = await rig.writeFile(name, [HEADER, ...rows].join('\n') + '\n');
  const imported = await rig.importFile(file);
  const { settled } = await followBatch(rig.services.batches, imported.batchId, { timeoutMs: 30_000 });
  expect(settled).toBe(true);
  return imported.batchId;
}

beforeAll(async () => {
  rig = await deliveryRig(
    'open-page',
    {},
    { BULKORDER_DASHBOARD_TOKEN: TOKEN, BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '1000' },
  );
  await rig.startWorker({ concurrency: 1 });
  // H1 is sent and never answered (not stored): held for review. D1 is refused with 422: dead-lettered.
  rig.simulator.setFaults({ script: [{ status: 200, noAnswer: true, path: 'orders' }] });
  heldBatch = await importAndSettle('held.csv', [orderRow('H1')]);
  rig.simulator.setFaults({
    script: [{ status: 422, body: { code: 'QUANTITY_LIMIT', message: 'at most 100 per order' }, path: 'orders' }],
  });
  await importAndSettle('refused.csv', [orderRow('D1')]);
  dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
  ({ browser, page } = await operatorPage(TOKEN));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await rig?.close();
});

describe('"Needs a person" in a real browser', () => {
  it('lists the open items as `open` does, acknowledges one with who and why, and is empty once the hold is released', async () => {
    await page.goto(`${dashboard.url}/`);
    await page.click('[data-test=nav-open]');
    expect(await page.textContent('[data-test=open-summary]')).toContain('2 open: 1 dead letter, 1 held order');
    expect(await page.locator('[data-test=open-group]').count()).toBe(2);
    const body = (await page.textContent('body')) ?? '';
    expect(body).toContain('HTTP 422 QUANTITY_LIMIT');
    expect(body).toContain('bulkorder review release ref.1001.H1');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    const cli = JSON.parse((await runCli(['open', '--json'], rig.env)).stdout) as { total: number };
    expect(cli.total).toBe(2);

    // Acknowledge the dead letter: who (the basic-auth user) and why are recorded; it leaves the count.
    await page.check('input[value="dead:ref.1001.D1"]');
    await page.fill('[data-test=ack-note]', 'customer ordered by phone instead');
    await page.click('[data-test=ack-button]');
    expect(await page.textContent('[role=status]')).toContain('Acknowledged by ops: 1 item');
    expect(await page.textContent('[data-test=open-summary]')).toContain('1 open: 1 held order');
    expect(await page.textContent('[data-test=open-acknowledged]')).toMatch(
      /dead:ref\.1001\.D1\s*ops\s*customer ordered by phone instead/,
    );

    // The held order is checked and released: delivered by the release's batch, the page empties.
    const released = await runCli(['review', 'release', '--all', '--wait', '--timeout', '30', '--by', 'bert'], rig.env);
    expect(released.code).toBe(0);
    await page.goto(`${dashboard.url}/open`);
    expect(await page.textContent('[data-test=open-summary]')).toContain('Nothing needs a person');

    // The batch that held it no longer counts it held; its page says who released it into which batch.
    await page.goto(`${dashboard.url}/batches/${heldBatch}`);
    expect(await page.textContent('[data-test=outcomes]')).toMatch(/0 held for review, 1 fixed since/);
    expect(await page.locator('[data-test=attention]').count()).toBe(0);
    expect(await page.textContent('[data-test=fixes]')).toMatch(
      /ref\.1001\.H1\s*held\s*released \(sent again\).*bert/s,
    );
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
  }, 90_000);

  it('a possible duplicate ticked and acknowledged is closed as `review duplicates ack` closes it: off its list, who and why in its batch', async () => {
    rig.simulator.setFaults({
      script: [{ path: 'orders', status: 502, body: { code: 'BAD_GATEWAY', message: 'closed' } }],
    });
    const { batchId } = await rig.importFile(
      await rig.writeFile('dup.csv', [HEADER, orderRow('P1')].join('\n') + '\n'),
    );
    expect(await settleBatch(rig, batchId)).toMatchObject({ delivered: 1, possibleDuplicates: 1 });
    await page.goto(`${dashboard.url}/open`);
    await page.check('input[value="duplicate:ref.1001.P1"]');
    await page.fill('[data-test=ack-note]', 'checked the portal: one copy');
    await page.click('[data-test=ack-button]');
    await page.waitForSelector('[role=status]');
    const listed = await runCli(['review', 'duplicates', 'list', '--json'], rig.env);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total: 0 });
    expect(await page.textContent('[role=status]')).toContain(
      'Acknowledged by ops: 1 item (1 possible duplicate closed',
    );
    expect(await page.textContent('[data-test=open-summary]')).toContain('Nothing needs a person');
    await page.goto(`${dashboard.url}/batches/${batchId}`);
    expect(await page.textContent('[data-test=fixes]')).toMatch(
      /ref\.1001\.P1\s*possible duplicate\s*possible duplicate acknowledged\s*checked the portal: one copy.*ops/s,
    );
  }, 90_000);
});
