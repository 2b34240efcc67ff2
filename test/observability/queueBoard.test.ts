import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { launchChromium } from '../helpers/browser.js';
import { waitFor } from '../helpers/cliProcess.js';

const TOKEN = 'queue-board-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const DELAYED = 'board-test-delayed';

let rig: DeliveryRig;
let dashboard: RunningDashboard;
let readOnly: RunningDashboard;
let browser: Browser;
let context: BrowserContext;
let jobIds: string[];

beforeAll(async () => {
  // No worker runs: the import's three jobs (one order each) wait in the orders queue.
  rig = await deliveryRig('queue-board', {}, { BULKORDER_DASHBOARD_TOKEN: TOKEN, BULKORDER_ORDERS_PER_JOB: '1' });
  const imported = await rig.importFile(await rig.writeFile('three.csv', ordersCsv('QB', 3)));
  jobIds = [1, 2, 3].map((n) => `${imported.batchId}.${n}`);
  dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
  readOnly = await startDashboard(rig.config, rig.logger, { port: 0, readOnly: true });
  browser = await launchChromium();
  context = await browser.newContext({ httpCredentials: { username: 'ops', password: TOKEN } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await readOnly?.close();
  await rig?.close();
});

/** Bull Board's page of the orders queue, `status` jobs, as Chromium shows it; returns the page's text and its buttons. */
async function boardPage(base: string, status: string): Promise<{ text: string; buttons: string[] }> {
  const page = await context.newPage();
  try {
    await page.goto(`${base}/queues/queue/orders?status=${status}`);
    await page
      .getByText(status === 'delayed' ? DELAYED : jobIds[0]!, { exact: false })
      .first()
      .waitFor({ timeout: 60_000 });
    const buttons = await page.getByRole('button').allInnerTexts();
    return { text: await page.innerText('body'), buttons };
  } finally {
    await page.close();
  }
}

describe('Bull Board at /queues', () => {
  it('shows the orders queue and its jobs with the token; 401 without it', async () => {
    const page = await context.newPage();
    await page.goto(`${dashboard.url}/queues`);
    await page.getByText('orders', { exact: true }).first().waitFor({ timeout: 60_000 });
    await page.close();
    const { text } = await boardPage(dashboard.url, 'waiting');
    for (const id of jobIds) expect(text).toContain(id);

    expect((await fetch(`${dashboard.url}/queues`)).status).toBe(401);
    expect((await fetch(`${dashboard.url}/queues/api/queues`)).status).toBe(401);
    const anonymous = await browser.newContext();
    expect((await anonymous.request.get(`${dashboard.url}/queues`)).status()).toBe(401);
    await anonymous.close();
  }, 120_000);

  it('read-only: no retry, clean or promote button, and every action refused', async () => {
    // A delayed job (as a retry waits out its backoff), where Bull Board offers promote and clean.
    await rig.services.queue.add('deliver-orders', {} as never, { jobId: DELAYED, delay: 3_600_000 });
    await waitFor(async () => (await rig.services.queue.getDelayedCount()) === 1, 'a delayed job');
    const actions = /retry|clean|promote|remove|duplicate|empty/i;

    const writable = await boardPage(dashboard.url, 'delayed');
    expect(writable.buttons.filter((b) => actions.test(b)).length).toBeGreaterThan(0);
    const shown = await boardPage(readOnly.url, 'delayed');
    expect(shown.buttons.filter((b) => actions.test(b))).toEqual([]);

    for (const path of [`orders/promote`, `orders/${DELAYED}/promote`, `orders/clean/delayed`, `orders/retry/failed`]) {
      const refused = await fetch(`${readOnly.url}/queues/api/queues/${path}`, { method: 'PUT', headers: AUTH });
      expect(refused.status, path).toBe(403);
    }
    expect(await rig.services.queue.getDelayedCount()).toBe(1);
  }, 120_000);

  it('writable: removing or cleaning jobs is refused (the ledger holds them as queued); promoting is allowed', async () => {
    for (const [method, path] of [
      ['PUT', `orders/clean/delayed`],
      ['PUT', `orders/${jobIds[1]}/clean`],
      ['PUT', `orders/empty`],
      ['PUT', `orders/pause`],
      ['PUT', `orders/${jobIds[1]}/retry`],
      ['PATCH', `orders/${jobIds[1]}/update-data`],
      ['POST', `orders/add`],
    ] as const) {
      const refused = await fetch(`${dashboard.url}/queues/api/queues/${path}`, { method, headers: AUTH });
      expect(refused.status, `${method} ${path}`).toBe(403);
    }
    expect(await rig.services.queue.getWaitingCount()).toBe(3);
    const cross = await fetch(`${dashboard.url}/queues/api/queues/orders/${DELAYED}/promote`, {
      method: 'PUT',
      headers: { ...AUTH, origin: 'https://elsewhere.example' },
    });
    expect(cross.status).toBe(403);
    const promoted = await fetch(`${dashboard.url}/queues/api/queues/orders/${DELAYED}/promote`, {
      method: 'PUT',
      headers: AUTH,
    });
    expect(promoted.status).toBe(204);
    await waitFor(async () => (await rig.services.queue.getWaitingCount()) === 4, 'the promoted job waiting');
    expect(await rig.services.queue.getDelayedCount()).toBe(0);
  }, 120_000);
});
