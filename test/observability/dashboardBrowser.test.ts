import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { projectRoot } from '../../src/paths.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { waitFor } from '../helpers/cliProcess.js';
import { operatorPage } from '../helpers/browser.js';
import { startWorkerObservers, type WorkerObservers } from '../../src/health/workerObservers.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';

const TOKEN = 'dashboard-test-token-0123456789';
/** `BULKORDER_SCREENSHOTS=1 npx vitest run test/observability/dashboardBrowser.test.ts` refreshes docs/*.png. */
const SHOTS = process.env.BULKORDER_SCREENSHOTS === '1';

let rig: DeliveryRig;
let dashboard: RunningDashboard;
let readOnly: RunningDashboard;
let browser: Browser;
let page: Page;
let observers: WorkerObservers;
let worker: { close(): Promise<void> };
const batchIds: string[] = [];

async function importAndSettle(name: string, rows: string[]): Promise<string> {
  const file = await rig.writeFile(name, [HEADER, ...rows].join('\n') + '\n');
  const imported = await rig.importFile(file);
  await followBatch(rig.services.batches, imported.batchId, { timeoutMs: 20_000 });
  batchIds.push(imported.batchId);
  return imported.batchId;
}

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  await mkdir(join(projectRoot, 'docs'), { recursive: true });
  await page.screenshot({ path: join(projectRoot, 'docs', `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  rig = await deliveryRig(
    'dashboard',
    {},
    { BULKORDER_DASHBOARD_TOKEN: TOKEN, BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '1000' },
  );
  // The worker as `bulkorder worker` runs it: with its observers, so the overview's chart has minutes.
  observers = await startWorkerObservers(rig.config, rig.logger, { pollMs: 200 });
  worker = await startBusinessDelivery(rig.config, rig.logger, { prefix: rig.prefix, metrics: observers.metrics });
  // H1 is sent and never answered: held for review. D1 is refused once with 422: dead-lettered.
  rig.simulator.setFaults({ script: [{ status: 200, noAnswer: true, path: 'orders' }] });
  await importAndSettle('held.csv', [orderRow('H1')]);
  rig.simulator.setFaults({
    script: [
      {
        status: 422,
        body: { code: 'QUANTITY_LIMIT', message: 'at most 100 of product 5001 per order' },
        path: 'orders',
      },
    ],
  });
  await importAndSettle('refused.csv', [orderRow('D1')]);
  await importAndSettle(
    'nightly-orders.csv',
    ['A1', 'A2', 'A3', 'A4'].map((r) => orderRow(r)),
  );
  dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
  readOnly = await startDashboard(rig.config, rig.logger, { port: 0, readOnly: true });
  ({ browser, page } = await operatorPage(TOKEN, 1366));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await readOnly?.close();
  await dashboard?.close();
  await worker?.close();
  await observers?.close();
  await rig?.close();
});

describe('the dashboard in a real browser', () => {
  it('the overview shows the environment, the queue and the batches', async () => {
    await page.goto(`${dashboard.url}/`);
    expect(await page.textContent('[data-test=env]')).toBe('ACCEPTANCE');
    for (const id of batchIds) expect(await page.textContent('[data-test=batches]')).toContain(id);
    expect(await page.textContent('[data-test=dead-count]')).toBe('1');
    expect(await page.textContent('[data-test=held-count]')).toBe('1');
    expect(await page.textContent('body')).toContain('Live workers (1)');
    // The 24-hour chart counts what the worker did (its minutes reach Redis within the flush interval).
    await waitFor(async () => {
      await page.goto(`${dashboard.url}/`);
      return (await page.textContent('[data-test=activity]'))?.includes('delivered 4') === true;
    }, 'the chart to show the delivered orders');
    expect(await page.textContent('[data-test=activity]')).toMatch(/refused 1.*held 1/s);
    expect(await page.textContent('[data-test=p50]')).toMatch(/ms/);
    await shot('dashboard-overview');
    await page.click(`a[href^="/batches/${batchIds[1]}"]`);
    expect(await page.textContent('[data-test=parked]')).toContain('QUANTITY_LIMIT');
    // Lists mask personal data; the order's own page shows it.
    expect(await page.textContent('[data-test=parked]')).toContain('A*** d***, a***@e***.nl');
    expect(await page.textContent('body')).not.toContain('anna.d1@example.nl');
    // Tables fit a 1366 px laptop screen: nothing scrolls sideways.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1366);
    await shot('dashboard-batch');
  }, 60_000);

  it('a dead letter is retried by clicking, then delivered', async () => {
    await page.goto(`${dashboard.url}/dead-letters`);
    await page.click('a[href="/orders/ref.1001.D1"]');
    expect(await page.textContent('body')).toContain('anna.d1@example.nl');
    expect(await page.textContent('[data-test=error-body]')).toContain('at most 100 of product 5001');
    await page.goto(`${dashboard.url}/dead-letters`);
    expect(await page.textContent('[data-test=causes]')).toMatch(/1\s*422\s*QUANTITY_LIMIT/);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1366);
    await shot('dashboard-dead-letters');
    // A purge asks on a page of its own; cancelling keeps the dead letter.
    await page.check('input[name=keys][value="ref.1001.D1"]');
    await page.click('[data-test=purge-selected]');
    expect(await page.textContent('[data-test=purge-confirm]')).toContain('Purge 1 dead letter?');
    await page.click('[data-test=purge-cancel]');
    expect(await page.textContent('[data-test=matched]')).toContain('1 match');
    await page.check('input[name=keys][value="ref.1001.D1"]');
    await page.click('[data-test=retry-selected]');
    expect(await page.textContent('.flash')).toMatch(/retried: 1 queued again as batch/);
    await waitFor(
      async () => (await rig.services.ledger.get('ref.1001.D1'))?.state === 'delivered',
      'the retried order delivered',
    );
    await page.goto(`${dashboard.url}/dead-letters`);
    expect(await page.textContent('[data-test=matched]')).toContain('0 match');
  });

  it('a held order is released by clicking, then delivered', async () => {
    await page.goto(`${dashboard.url}/held`);
    await shot('dashboard-held');
    await page.check('input[name=keys][value="ref.1001.H1"]');
    await page.fill('input[name=note]', 'not on the service');
    await page.click('[data-test=release-selected]');
    expect(await page.textContent('.flash')).toMatch(/released by ops: 1 queued again/);
    await waitFor(
      async () => (await rig.services.ledger.get('ref.1001.H1'))?.state === 'delivered',
      'the released order delivered',
    );
    const entry = await rig.services.ledger.get('ref.1001.H1');
    expect(entry?.review).toMatchObject({ action: 'released', by: 'ops', note: 'not on the service' });
    await page.goto(`${dashboard.url}/search?q=H1`);
    expect(await page.textContent('[data-test=hits]')).toContain('ref.1001.H1');
  });

  it('refuses actions without credentials or a form token', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${dashboard.url}/dead-letters/action`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: 'action=retry-matching',
        redirect: 'manual',
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer wrong-token-wrong-token' })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}` })).status).toBe(403); // no CSRF form token
    expect((await fetch(`${dashboard.url}/`)).status).toBe(401);
    expect((await fetch(`${dashboard.url}/healthz`)).status).toBe(200);
    // A browser page of another origin cannot post, even with the user's credentials.
    const other = await browser.newPage({ httpCredentials: { username: 'ops', password: TOKEN } });
    await other.goto(`${dashboard.url}/dead-letters`);
    const token = await other.inputValue('input[name=_csrf]');
    const crossSite = await post({ authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' }).then(() =>
      fetch(`${dashboard.url}/dead-letters/action`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`ops:${TOKEN}`).toString('base64')}`,
          origin: 'https://evil.example',
        },
        body: `action=retry-matching&_csrf=${encodeURIComponent(token)}`,
        redirect: 'manual',
      }),
    );
    expect(crossSite.status).toBe(403);
    await other.close();
  });

  it('read-only mode hides actions and refuses them', async () => {
    await page.goto(`${readOnly.url}/held`);
    expect(await page.textContent('.readonly')).toContain('--read-only');
    expect(await page.$('[data-test=release-selected]')).toBeNull();
    expect(await page.$('input[name=keys]')).toBeNull();
    const refused = await fetch(`${readOnly.url}/held/action`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${TOKEN}` },
      body: 'action=release-matching',
    });
    expect(refused.status).toBe(403);
    await page.goto(`${readOnly.url}/schedules`);
    expect(await page.textContent('h1')).toBe('Schedules');
  });
});
