/**
 * Issue 33: "Needs a person" acknowledges possible duplicates in bulk (one batch's, or all listed) with who and
 * why, through the same code as `review duplicates ack`: off the index, into the batch's history of fixes. Real
 * Chromium (playwright-core), real Redis, the simulator answering 502/503 once, and a worker.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { deliveryRig, HEADER, orderRow, settleBatch, type DeliveryRig } from '../helpers/deliveryRig.js';
import { operatorPage } from '../helpers/browser.js';

const TOKEN = 'dup-ack-test-token-0123456789';

let rig: DeliveryRig;
let dashboard: RunningDashboard;
let readOnly: RunningDashboard;
let browser: Browser;
let page: Page;
let first: string;
let second: string;

/** A batch of `refs` whose first POST is answered `status` and then delivered on retry: one possible duplicate. */
async function flaggedBatch(name: string, refs: string[], status: number, code: string): Promise<string> {
  rig.simulator.setFaults({ script: [{ path: 'orders', status, body: { code, message: 'upstream closed' } }] });
  const file = await rig.writeFile(name, [HEADER, ...refs.map((ref) => orderRow(ref))].join('\n') + '\n');
  const imported = await rig.importFile(file);
  expect(await settleBatch(rig, imported.batchId)).toMatchObject({ delivered: refs.length, possibleDuplicates: 1 });
  return imported.batchId;
}

const indexed = () => rig.services.redis.zcard(rig.services.keys.duplicates);

beforeAll(async () => {
  rig = await deliveryRig('dup-ack-browser', {}, { BULKORDER_DASHBOARD_TOKEN: TOKEN });
  await rig.startWorker({ concurrency: 1 });
  first = await flaggedBatch('a.csv', ['A-1', 'A-2'], 502, 'BAD_GATEWAY');
  second = await flaggedBatch('b.csv', ['B-1'], 503, 'UPSTREAM_DOWN');
  dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
  readOnly = await startDashboard(rig.config, rig.logger, { port: 0, readOnly: true });
  ({ browser, page } = await operatorPage(TOKEN));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await readOnly?.close();
  await dashboard?.close();
  await rig?.close();
});

describe('acknowledging possible duplicates on "Needs a person"', () => {
  it('read-only: lists them with the CLI command, no form', async () => {
    await page.goto(`${readOnly.url}/open`);
    expect(await page.textContent('[data-test=open-summary]')).toContain('2 open: 2 possible duplicates');
    expect(await page.textContent('body')).toContain(`review duplicates ack --batch ${first}`);
    expect(await page.locator('[data-test=dup-ack-form]').count()).toBe(0);
  }, 60_000);

  it('refuses a post without the form token, from another origin, or without why; nothing is acknowledged', async () => {
    await page.goto(`${dashboard.url}/open`);
    const token = await page.inputValue('[data-test=dup-ack-form] input[name=_csrf]');
    const forged = await page.request.post(`${dashboard.url}/open/duplicates/ack`, {
      form: { why: 'forged', kind: 'orders' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    const crossSite = await page.request.post(`${dashboard.url}/open/duplicates/ack`, {
      form: { why: 'forged', kind: 'orders', _csrf: token },
      headers: { origin: 'https://evil.example' },
      maxRedirects: 0,
    });
    expect(crossSite.status()).toBe(403);
    const noWhy = await page.request.post(`${dashboard.url}/open/duplicates/ack`, {
      form: { kind: 'orders', _csrf: token },
      maxRedirects: 0,
    });
    expect(noWhy.status()).toBe(303);
    expect(noWhy.headers().location).toContain('Say+why');
    expect(await indexed()).toBe(2);
    expect(await rig.services.batches.fixes(first)).toEqual([]);
  }, 60_000);

  it("acknowledges one batch's, then all the rest: gone from the list and the index, who and why in each batch's history", async () => {
    await page.goto(`${dashboard.url}/open`);
    expect(await page.textContent('[data-test=open-summary]')).toContain('2 open: 2 possible duplicates');
    await page.selectOption('[data-test=dup-ack-batch]', first);
    await page.fill('[data-test=dup-ack-why]', 'checked the portal: one copy');
    await page.click('[data-test=dup-ack-button]');
    expect(await page.textContent('[role=status]')).toContain(
      `Acknowledged by ops: 1 possible duplicate of batch ${first}`,
    );
    expect(await page.textContent('[data-test=open-summary]')).toContain('1 open: 1 possible duplicate');
    const listed = await page
      .locator('[data-test=open-items] tr[data-id]')
      .evaluateAll((rows) => rows.map((row) => row.textContent ?? ''));
    expect(listed).toHaveLength(1);
    expect(listed[0]).toContain(second);
    expect(await indexed()).toBe(1);

    // The batch's page shows the acknowledgement in its history of fixes: who (the basic-auth user) and why.
    await page.goto(`${dashboard.url}/batches/${first}`);
    expect(await page.textContent('[data-test=fixes]')).toMatch(
      /possible duplicate\s*possible duplicate acknowledged\s*checked the portal: one copy.*ops/s,
    );

    // All the rest, with a name typed in.
    await page.goto(`${dashboard.url}/open`);
    await page.fill('[data-test=dup-ack-why]', 'second copy cancelled on the service');
    await page.fill('[data-test=dup-ack-form] input[name=by]', 'anna');
    await page.click('[data-test=dup-ack-button]');
    expect(await page.textContent('[role=status]')).toContain('Acknowledged by anna: 1 possible duplicate,');
    expect(await page.textContent('[data-test=open-summary]')).toContain('Nothing needs a person');
    expect(await page.locator('[data-test=dup-ack-form]').count()).toBe(0);

    expect(await indexed()).toBe(0);
    expect(await rig.services.redis.hlen(rig.services.keys.duplicateInfo)).toBe(0);
    expect(await rig.services.batches.fixes(first)).toEqual([
      expect.objectContaining({
        was: 'duplicate',
        how: 'acknowledged',
        batch: first,
        by: 'ops',
        note: 'checked the portal: one copy',
      }),
    ]);
    expect(await rig.services.batches.fixes(second)).toEqual([
      expect.objectContaining({
        key: 'ref.1001.B-1',
        was: 'duplicate',
        how: 'acknowledged',
        batch: second,
        by: 'anna',
        note: 'second copy cancelled on the service',
      }),
    ]);
    // The scripted 5xx stored nothing: each order exists once on the service.
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 3, duplicateOrdersAccepted: 0 });
  }, 90_000);
});
