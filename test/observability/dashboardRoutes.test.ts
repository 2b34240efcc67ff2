import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { dashboardApp } from '../../src/dashboard/dashboardApp.js';
import { openDashboardState, type DashboardState } from '../../src/dashboard/dashboardState.js';
import { importAndFollow } from '../../src/importer/importAndFollow.js';
import { exportDeadLetters } from '../../src/deadLetter/exportDeadLetters.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { startPrivateRedis } from '../helpers/privateRedis.js';
import { waitFor } from '../helpers/cliProcess.js';
import { CircuitBreaker } from '../../src/worker/circuitBreaker.js';

const TOKEN = 'routes-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

let rig: DeliveryRig;
let state: DashboardState;
let app: ReturnType<typeof dashboardApp>;
const ids: Record<string, string> = {};

const get = (path: string) => app.request(path, { headers: AUTH });
const html = async (path: string, status = 200): Promise<string> => {
  const response = await get(path);
  expect(response.status, path).toBe(status);
  return response.text();
};
const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const quiet = new Writable({ write: (_chunk, _enc, done) => done() }) as unknown as NodeJS.WriteStream;

async function settle(name: string, rows: string[]): Promise<string> {
  const imported = await rig.importFile(await rig.writeFile(name, [HEADER, ...rows, ''].join('\n')));
  await followBatch(rig.services.batches, imported.batchId, { timeoutMs: 20_000 });
  return imported.batchId;
}

beforeAll(async () => {
  rig = await deliveryRig(
    'routes',
    {},
    { BULKORDER_DASHBOARD_TOKEN: TOKEN, BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '1000' },
  );
  await rig.startWorker();
  // import --wait of a file with a rejected row: both its results and rejects file exist.
  const mixed = await rig.writeFile('mixed.csv', [HEADER, orderRow('G1'), orderRow('BAD', 5001, 0), ''].join('\n'));
  ids.mixed = (
    await importAndFollow(
      mixed,
      {},
      { services: rig.services, logger: rig.logger },
      { wait: true, out: quiet, timeoutMs: 20_000 },
    )
  ).result.batchId;
  rig.simulator.setFaults({ script: [{ status: 200, noAnswer: true, path: 'orders' }] });
  ids.held = await settle('held.csv', [orderRow('H1')]);
  // Three refusals, two causes: 0 delivered, all dead-lettered.
  rig.simulator.setFaults({
    script: [
      { status: 422, body: { code: 'QUANTITY_LIMIT', message: 'at most 100 per order' }, path: 'orders' },
      { status: 422, body: { code: 'QUANTITY_LIMIT', message: 'at most 100 per order' }, path: 'orders' },
      { status: 409, body: { code: 'CUSTOMER_BLOCKED', message: 'customer blocked' }, path: 'orders' },
    ],
  });
  ids.dead = await settle('refused.csv', [orderRow('D1'), orderRow('D2'), orderRow('D3')]);
  state = await openDashboardState(rig.config, rig.logger);
  app = dashboardApp(state, { readOnly: false, shuttingDown: () => false });
}, 90_000);

afterAll(async () => {
  await state?.close();
  await rig?.close();
});

describe('dashboard routes in process (hono app.request)', () => {
  it('every page answers, with the token only', async () => {
    expect((await app.request('/')).status).toBe(401);
    for (const path of [
      '/',
      '/batches',
      `/batches/${ids.dead}`,
      '/search?q=D1',
      '/orders/ref.1001.D1',
      '/schedules',
      '/dead-letters',
      '/held',
    ])
      await html(path);
    await html('/batches/b-none', 404);
    await html('/orders/ref.1001.NONE', 404);
    await html('/dead-letters?status=abc', 400);
  });

  it('a batch page links the results and rejects files import stored, and serves them', async () => {
    const page = await html(`/batches/${ids.mixed}`);
    expect(page).toContain('data-test="results-link"');
    expect(page).toContain('data-test="rejects-link"');
    const results = await get(`/batches/${ids.mixed}/results.csv`);
    expect(results.status).toBe(200);
    expect(await results.text()).toContain('G1');
    const rejects = await get(`/batches/${ids.mixed}/rejects.csv`);
    expect(rejects.status).toBe(200);
    expect(await rejects.text()).toContain('BAD');
  });

  it("an order page shows a dead letter's source rows, rebuilt through its kind", async () => {
    const page = await html('/orders/ref.1001.D1');
    const rows = /<pre data-test="source-rows">([^<]*)<\/pre>/.exec(page)?.[1] ?? '';
    expect(decode(rows)).toContain('orderRef=D1');
    expect(decode(rows)).toContain('email=anna.d1@example.nl');
  });

  it('a batch with 0 delivered and 3 dead-lettered shows a red bar and is marked; a failed import says so', async () => {
    const list = await html('/batches');
    const row = new RegExp(`<tr class="attention" data-batch="${ids.dead}">[\\s\\S]*?</tr>`).exec(list)?.[0] ?? '';
    expect(row).toContain('needs attention');
    expect(row).toContain('class="dead" style="width:100%"');
    expect(row).not.toContain('class="delivered"');
    const done = new RegExp(`<tr class="" data-batch="${ids.held}">`).exec(list);
    expect(done).toBeNull(); // held counts as attention too
    await rig.services.batches.create({
      id: 'b-failed-import',
      file: '/srv/x.csv',
      sha256: '',
      env: 'acceptance',
      columns: [],
    });
    await rig.services.batches.finishImport('b-failed-import', 'failed', {
      rows: 10,
      orders: 10,
      valid: 10,
      rejected: 0,
    });
    const failed = await html('/batches/b-failed-import');
    expect(failed).toContain('data-test="bar">import failed');
    expect(failed).toContain('Needs attention');
  });

  it('dead letters are grouped by cause with a count each; a group lists its own', async () => {
    const page = await html('/dead-letters');
    const counts = [...page.matchAll(/<tr data-cause="([^"]*)"><td><b data-test="cause-count">(\d+)<\/b>/g)].map(
      (m) => [decode(m[1]!), Number(m[2])],
    );
    expect(counts).toEqual([
      ['[422,"QUANTITY_LIMIT","at most 100 per order"]', 2],
      ['[409,"CUSTOMER_BLOCKED","customer blocked"]', 1],
    ]);
    const one = await html(`/dead-letters?cause=${encodeURIComponent('[409,"CUSTOMER_BLOCKED","customer blocked"]')}`);
    expect([...one.matchAll(/<tr data-key="/g)]).toHaveLength(1);
    expect(one).toContain('1 match (3 in all)');
    const batch = await html(`/batches/${ids.dead}`);
    expect(batch).toContain(`href="/dead-letters?batch=${ids.dead}"`);
  });

  it('a purge asks again on a page of its own before anything is purged', async () => {
    const list = await html('/dead-letters');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(list)![1]!;
    const cause = '[409,"CUSTOMER_BLOCKED","customer blocked"]';
    const post = (extra: Record<string, string>) =>
      app.request('/dead-letters/action', {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          _csrf: decode(csrf),
          kind: 'orders',
          action: 'purge-matching',
          cause,
          ...extra,
        }).toString(),
      });
    const ask = await post({});
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain('Purge 1 dead letter?');
    expect(await state.targets.orders.dead.count()).toBe(3);
    const done = await post({ confirm: 'yes' });
    expect(done.status).toBe(303);
    expect(await state.targets.orders.dead.count()).toBe(2);
  });
});

describe('dead letters at scale and Redis away', () => {
  it("export keeps a fresh batch's dead letters under the input's columns (not 'columns unknown')", async () => {
    const items = await state.targets.orders.dead.select(ids.dead === undefined ? {} : { batchId: ids.dead });
    const files = await exportDeadLetters(items, rig.services.batches, {
      outPath: join(rig.dir, 'dl.csv'),
      rebuild: rig.services.kind.rebuildRows,
    });
    expect(files.map((f) => [f.deadLetters, f.canonical])).toEqual([[items.length, false]]);
  });

  it('groups and pages 10,000 dead letters, 50 a page, every one exactly once', async () => {
    const other = await deliveryRig('routes-10k', {}, { BULKORDER_DASHBOARD_TOKEN: TOKEN });
    const otherState = await openDashboardState(other.config, other.logger);
    try {
      const { redis, keys } = otherState.targets.orders.services;
      const now = Date.now();
      // Written as the settle script writes them (record + index member); ten causes, 1,000 each.
      for (let start = 0; start < 10_000; start += 1000) {
        const pipeline = redis.pipeline();
        for (let i = start; i < start + 1000; i++) {
          const key = `ref.1001.S${String(i).padStart(5, '0')}`;
          const record = {
            kind: 'dead',
            key,
            batchId: 'b-scale',
            file: 'scale.csv',
            lines: [i + 2],
            orderRef: `S${i}`,
            payload: {},
            cells: [['x']],
            reason: 'refused',
            httpStatus: 422,
            code: `CODE_${i % 10}`,
            message: 'refused',
            attempts: 1,
            parkedAt: now - 10_000 + (i >> 2),
          };
          pipeline
            .set(keys.parked('dead', key), JSON.stringify(record), 'PX', 3_600_000)
            .zadd(keys.parkedIndex('dead'), record.parkedAt, key);
        }
        await pipeline.exec();
      }
      const otherApp = dashboardApp(otherState, { readOnly: false, shuttingDown: () => false });
      const read = async (path: string) => (await otherApp.request(path, { headers: AUTH })).text();
      let started = performance.now();
      const first = await read('/dead-letters');
      const firstMs = performance.now() - started;
      expect([...first.matchAll(/data-test="cause-count">(\d+)</g)].map((m) => Number(m[1]))).toEqual(
        Array(10).fill(1000),
      );
      expect(first).toContain('10000 match (10000 in all)');
      // Later pages cost their own records: no groups, no count.
      expect(first).toContain('data-test="causes"');
      const seen = new Set<string>();
      let path: string | undefined = '/dead-letters';
      let pages = 0;
      started = performance.now();
      while (path !== undefined) {
        const page = await read(path);
        const onPage = [...page.matchAll(/<tr data-key="([^"]+)"/g)].map((m) => m[1]!);
        expect(onPage.length).toBeLessThanOrEqual(50);
        for (const key of onPage) seen.add(key);
        pages++;
        path = /href="([^"]+)" data-test="next-page"/.exec(page)?.[1]?.replace(/&amp;/g, '&');
      }
      // Informational figures for the report (never asserted: the machine is shared).
      process.stderr.write(
        `dead letters 10,000: first page with groups ${Math.round(firstMs)} ms; ${pages} pages in ${Math.round(performance.now() - started)} ms\n`,
      );
      expect(seen.size).toBe(10_000);
      expect(pages).toBe(200);
    } finally {
      await otherState.close();
      await other.close();
    }
  }, 120_000);

  it('names Redis when it is unreachable (503), and serves pages again once it is back', async () => {
    const server = await startPrivateRedis();
    // A password in the URL (this server ignores it) must never reach the page.
    const other = await deliveryRig(
      'routes-down',
      {},
      { BULKORDER_DASHBOARD_TOKEN: TOKEN, REDIS_URL: server.url.replace('redis://', 'redis://:pw-secret@') },
    );
    const otherState = await openDashboardState(other.config, other.logger);
    try {
      const otherApp = dashboardApp(otherState, { readOnly: false, shuttingDown: () => false });
      expect((await otherApp.request('/dead-letters', { headers: AUTH })).status).toBe(200);
      await server.kill();
      const down = await otherApp.request('/dead-letters', { headers: AUTH });
      expect(down.status).toBe(503);
      const text = await down.text();
      expect(decode(text)).toMatch(
        new RegExp(
          `Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${new URL(server.url).port}/? unreachable since \\d{4}-`,
        ),
      );
      expect(text).not.toContain('pw-secret');
      await server.restart();
      await waitFor(
        async () => (await otherApp.request('/dead-letters', { headers: AUTH })).status === 200,
        'the dashboard to serve pages again',
      );
    } finally {
      await otherState.close();
      await other.close().catch(() => undefined);
      await server.stop();
    }
  }, 60_000);
});

describe('the breaker banner', () => {
  it('says the API is failing while the breaker is still closed (degraded), naming the share', async () => {
    const breaker = new CircuitBreaker(rig.services.redis, rig.services.keys, rig.logger, {
      settings: rig.services.delivery.breaker,
      pauseQueue: async () => undefined,
      resumeQueue: async () => undefined,
      requeueBurst: async (keys) => keys.length,
    });
    expect(await html('/')).not.toContain('API failing');
    for (let i = 0; i < 12; i++)
      await breaker.record({ kind: 'delivered', status: 201, body: {} }, `ok-${i}`, String(1001 + (i % 4)));
    for (let i = 0; i < 8; i++)
      await breaker.record(
        { kind: 'retry', status: [500, 502, 503, 504][i % 4]!, code: 'HTTP_5XX', message: 'bad gateway' },
        `bad-${i}`,
        String(1001 + (i % 4)),
      );
    expect((await breaker.status()).state).toBe('closed');
    // 8 of the window's attempts failed by the server (others were delivered by the tests above).
    expect(decode(await html('/'))).toMatch(
      /<strong>API failing: \d+% 5xx or no answer in the last 60 s<\/strong> \(the breaker is still closed\)/,
    );
  });
});
