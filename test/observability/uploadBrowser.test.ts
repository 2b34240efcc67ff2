/**
 * Import from the browser (issue 24), in real Chromium: a file picked on /upload is previewed with
 * its rejected rows' reasons, one click on Import delivers its valid orders exactly once, a refused
 * file says what the CLI says, headers that do not match get a mapping step that can be saved, and
 * a replayed form sends nothing again.
 */
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { waitFor } from '../helpers/cliProcess.js';
import { launchChromium } from '../helpers/browser.js';

const TOKEN = 'upload-test-token-0123456789abcd';
const MAX_BYTES = 4000;
/** `BULKORDER_SCREENSHOTS=1 npx vitest run test/observability/uploadBrowser.test.ts` refreshes docs/dashboard-upload-*.png. */
const SHOTS = process.env.BULKORDER_SCREENSHOTS === '1';
const shot = async (name: string) => {
  if (SHOTS) await page.screenshot({ path: join(projectRoot, 'docs', `${name}.png`), fullPage: true });
};

let rig: DeliveryRig;
let dashboard: RunningDashboard;
let readOnly: RunningDashboard;
let browser: Browser;
let page: Page;
let worker: { close(): Promise<void> };
const spools = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('bulkorder-upload-'));
let spoolsBefore: string[];

beforeAll(async () => {
  spoolsBefore = await spools();
  rig = await deliveryRig(
    'upload',
    {},
    { BULKORDER_DASHBOARD_TOKEN: TOKEN, BULKORDER_UPLOAD_MAX_BYTES: String(MAX_BYTES) },
  );
  worker = await startBusinessDelivery(rig.config, rig.logger, { prefix: rig.prefix });
  dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
  readOnly = await startDashboard(rig.config, rig.logger, { port: 0, readOnly: true });
  browser = await launchChromium();
  const context = await browser.newContext({
    httpCredentials: { username: 'desk', password: TOKEN },
    viewport: { width: 1180, height: 900 },
    acceptDownloads: true,
  });
  page = await context.newPage();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await readOnly?.close();
  await dashboard?.close();
  await worker?.close();
  await rig?.close();
  // Every upload's folder and the spool itself are gone with the dashboard.
  expect(await spools()).toEqual(spoolsBefore);
});

/** Clicks a download link and returns what it served. */
async function downloaded(selector: string): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFile(await download.path(), 'utf8');
}

/** Picks `file` on the upload page and waits for the page the upload leads to. */
async function upload(file: string): Promise<void> {
  await page.goto(`${dashboard.url}/`);
  await page.click('[data-test=nav-upload]');
  await page.setInputFiles('[data-test=file]', file);
  await page.click('[data-test=upload]');
}

describe('import from the browser', () => {
  it('previews a file with its rejected rows and reasons, and one click delivers its valid orders exactly once', async () => {
    const badPhone = orderRow('U3').replace(/,\+31[0-9]+,/, ',12345,');
    const file = await rig.writeFile(
      'gift-desk.csv',
      [HEADER, orderRow('U1'), orderRow('U2'), badPhone].join('\n') + '\n',
    );
    await upload(file);
    await page.waitForURL(/\/upload\/[\w-]+/);
    expect(await page.textContent('[data-test=valid]')).toBe('2');
    expect(await page.textContent('[data-test=rejected]')).toBe('1');
    expect(await page.textContent('[data-test=error-kinds]')).toContain('telephoneNumber');
    const firstErrors = await page.textContent('[data-test=first-errors]');
    expect(firstErrors).toMatch(/4\s*telephoneNumber\s*\*+\s*telephoneNumber '\*+' must be international/); // line 4 (the header is line 1), field, masked value, reason
    expect(firstErrors).not.toContain('bulkorder-upload-'); // the spool's path is nobody's business
    const download = await Promise.all([page.waitForEvent('download'), page.click('[data-test=rejects-link]')]).then(
      ([d]) => d,
    );
    expect(download.suggestedFilename()).toBe('gift-desk.rejects.csv');
    await shot('dashboard-upload-preview');
    const previewUrl = page.url();
    const csrf = await page.inputValue('form[action$="/import"] input[name=_csrf]');

    await page.click('[data-test=import]');
    await page.waitForURL(/\/batches\//);
    const batchId = decodeURIComponent(/\/batches\/([^?]+)/.exec(page.url())![1]!);
    const { settled, batch } = await followBatch(rig.services.batches, batchId, { timeoutMs: 30_000 });
    expect([settled, batch.delivered, batch.rejected]).toEqual([true, 2, 1]);
    expect(rig.simulator.counters().ordersAccepted).toBe(2);

    // The batch page follows delivery live, then shows the end state and serves the upload's trail: its
    // results file (written once the batch settled, under BULKORDER_RESULTS_DIR) and its rejects file.
    await waitFor(async () => {
      await page.goto(`${dashboard.url}/batches/${encodeURIComponent(batchId)}`);
      return (
        (await page.textContent('[data-test=batch-state]'))?.includes('settled') === true &&
        (await page.locator('[data-test=results-link]').count()) === 1
      );
    }, 'the batch page to show the settled batch and its results file');
    const results = await downloaded('[data-test=results-link]');
    expect(results.split('\n').filter((line) => /^ref\.1001\.U[12],U[12],\d,delivered,/.test(line))).toHaveLength(2);
    expect(results).toMatch(/^ref\.1001\.U3,U3,4,rejected,/m);
    const rejects = await downloaded('[data-test=rejects-link]'); // still there after Import
    expect(rejects).toContain('U3,1001,Anna');
    expect(rejects).toContain('PHONE_NOT_INTERNATIONAL');
    const stored = (await rig.services.batches.get(batchId))!;
    expect(stored.resultsFile!.startsWith(join(rig.config.files.resultsDir, 'uploads'))).toBe(true);
    expect(stored.file).toBe(stored.resultsFile!.replace(/\.results\.csv$/, ''));

    // A replayed Import (back button, resubmitted form, a script) finds nothing to import: nothing is sent again.
    const replay = await page.request.post(`${previewUrl.replace(/\?.*$/, '')}/import`, {
      form: { _csrf: csrf, kind: 'orders' },
      headers: { origin: dashboard.url },
      maxRedirects: 0,
    });
    expect(replay.status()).toBe(404);
    const forged = await page.request.post(`${previewUrl.replace(/\?.*$/, '')}/import`, {
      form: { kind: 'orders' },
      headers: { origin: dashboard.url },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    await page.goto(previewUrl);
    expect(await page.textContent('body')).toContain('was imported, discarded or has expired');
    expect(rig.simulator.counters().ordersAccepted).toBe(2);
  }, 90_000);

  it('a binary, an empty and an oversized file are refused with the code and exit-code meaning of the CLI', async () => {
    const binary = await rig.writeFile('photo.csv', '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01');
    await upload(binary);
    await page.waitForURL(/\/upload\/[\w-]+/);
    expect(await page.textContent('[data-test=refusal]')).toMatch(/FILE_BINARY|NOT_TEXT|BINARY/);
    expect(await page.textContent('body')).toContain('exit 3 (file refused');

    await upload(await rig.writeFile('empty.csv', ''));
    await waitFor(
      async () => ((await page.textContent('[data-test=upload-status]')) ?? '').includes('FILE_EMPTY'),
      'the empty file refused',
    );

    await upload(
      await rig.writeFile('huge.csv', [HEADER, ...Array.from({ length: 40 }, (_, i) => orderRow(`B${i}`))].join('\n')),
    );
    await waitFor(
      async () => ((await page.textContent('[data-test=upload-status]')) ?? '').includes('FILE_TOO_LARGE'),
      'the oversized file refused',
    );
    expect(await page.textContent('[data-test=upload-status]')).toContain('4 KB');
  }, 60_000);

  it('offers every field without a column (orderRef too) with the near miss pre-selected, says which columns are left out, and saves the mapping for the next file', async () => {
    // "Bestelnummer" holds the orderRef; "Voornaam" the first name; "Opmerking" nothing we know.
    const header = HEADER.replace('orderRef', 'Bestelnummer').replace('firstName', 'Voornaam') + ',Opmerking';
    const file = await rig.writeFile('dutch.csv', [header, `${orderRow('M1')},bellen`].join('\n') + '\n');
    await upload(file);
    await page.waitForURL(/\/upload\/[\w-]+/);
    const refusal = await page.textContent('[data-test=refusal]');
    expect(refusal).toContain('firstName');
    expect(refusal).not.toContain('--map'); // the dashboard's advice, not the CLI's
    expect(await page.inputValue('[data-test=map-firstName]')).toBe('Voornaam');
    expect(await page.inputValue('[data-test=map-orderRef]')).toBe('Bestelnummer');
    expect(await page.textContent('[data-test=ignored-columns]')).toContain('Bestelnummer, Voornaam, Opmerking');
    await shot('dashboard-upload-mapping');
    await page.check('[data-test=save-mapping]');
    await page.click('[data-test=apply-mapping]');
    await page.waitForSelector('[data-test=valid]');
    expect(await page.textContent('[data-test=valid]')).toBe('1');
    expect(await page.textContent('[data-test=ignored-columns]')).toContain('Opmerking');
    expect(await page.textContent('body')).toContain('Bestelnummer → orderRef');

    // The next file with the same headers goes straight to its preview.
    await upload(await rig.writeFile('dutch-2.csv', [header, `${orderRow('M2')},bellen`].join('\n') + '\n'));
    await page.waitForSelector('[data-test=valid]');
    expect(await page.textContent('[data-test=valid]')).toBe('1');
  }, 60_000);

  it('a complete file with an order reference column under another name: the preview says it is left out and the mapping step offers orderRef', async () => {
    // Not "Bestelnummer": the test above saved that mapping, and a saved mapping is applied to every upload.
    const header = HEADER.replace('orderRef', 'Ordernummer');
    const file = await rig.writeFile('refs.csv', [header, orderRow('R1'), orderRow('R2')].join('\n') + '\n');
    await upload(file);
    await page.waitForSelector('[data-test=valid]');
    expect(await page.textContent('[data-test=ignored-columns]')).toContain('Ordernummer');
    const note = await page.textContent('[data-test=warning]');
    expect(note).toContain('"Ordernummer" looks like an order reference');
    expect(note).not.toContain('--map');
    await page.click('[data-test=change-mapping]');
    expect(await page.inputValue('[data-test=map-orderRef]')).toBe('Ordernummer');
    await page.click('[data-test=apply-mapping]');
    await page.waitForSelector('[data-test=valid]');
    expect(await page.locator('[data-test=ignored-columns]').count()).toBe(0);
    await page.click('form[action$="/discard"] button');
  }, 60_000);

  it('speaks to a dashboard user: "an order file", and a refused file gets what to do here, not CLI flags', async () => {
    await page.goto(`${dashboard.url}/upload`);
    expect(await page.textContent('main')).toContain('Pick or drop an order file');
    // The CLI says "Give it with --delimiter '~'" and "pass --allow-empty": the dashboard has no such flags.
    await upload(await rig.writeFile('tildes.csv', ['a~b~c', '1~2~3'].join('\n') + '\n'));
    await page.waitForSelector('[data-test=refusal]');
    expect(await page.textContent('[data-test=refusal]')).toContain('DELIMITER_UNKNOWN');
    expect(await page.textContent('main')).not.toMatch(/--[a-z]/);
    expect(await page.textContent('[data-test=advice]')).toContain('Save the file with , or ;');
    await upload(await rig.writeFile('header-only.csv', HEADER + '\n'));
    await page.waitForSelector('[data-test=refusal]');
    expect(await page.textContent('[data-test=refusal]')).toContain('FILE_EMPTY');
    expect(await page.textContent('main')).not.toMatch(/--[a-z]/);
  }, 60_000);

  it('the preview of a file with long values, many errors and a mapping fits a 1,280 px window', async () => {
    const wide = await browser.newPage({
      httpCredentials: { username: 'desk', password: TOKEN },
      viewport: { width: 1280, height: 900 },
    });
    try {
      // Under the test dashboard's upload cap (BULKORDER_UPLOAD_MAX_BYTES 4000): long unbroken words, few rows.
      const long = 'x'.repeat(150);
      const header = HEADER.replace('firstName', `Voornaam${long}`) + `,${long}`;
      const rows = Array.from(
        { length: 4 },
        (_, i) =>
          `${orderRow(`W${i}`)
            .replace('Keizersgracht', `Keizersgracht${long}`)
            .replace(/,\+31[0-9]+,/, `,${long},`)},${long}`,
      );
      const file = await rig.writeFile('wide.csv', [header, ...rows].join('\n') + '\n');
      await wide.goto(`${dashboard.url}/upload`);
      await wide.setInputFiles('[data-test=file]', file);
      await wide.click('[data-test=upload]');
      await wide.waitForSelector('[data-test=apply-mapping]'); // its first column has a name too long to guess
      {
        expect(Number(await wide.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(1280);
        await wide.selectOption('[data-test=map-firstName]', `Voornaam${long}`);
        await wide.click('[data-test=apply-mapping]');
        await wide.waitForSelector('[data-test=valid]');
      }
      expect(await wide.textContent('[data-test=rejected]')).toBe('4');
      expect(Number(await wide.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(1280);
      await wide.click('form[action$="/discard"] button');
    } finally {
      await wide.close();
    }
  }, 60_000);

  it('is an action: absent in read-only mode and refused without the token', async () => {
    const ro = await browser.newPage({ httpCredentials: { username: 'desk', password: TOKEN } });
    await ro.goto(`${readOnly.url}/`);
    expect(await ro.locator('[data-test=nav-upload]').count()).toBe(0);
    expect((await ro.goto(`${readOnly.url}/upload`))?.status()).toBe(403);
    await ro.close();
    expect(
      (await fetch(`${dashboard.url}/upload/file?name=x.csv`, { method: 'POST', body: 'a,b\n1,2\n' })).status,
    ).toBe(401);
    const noFormToken = await fetch(`${dashboard.url}/upload/file?name=x.csv`, {
      method: 'POST',
      body: 'a,b\n1,2\n',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(noFormToken.status).toBe(403);
  });
});
