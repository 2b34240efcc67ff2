import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { dashboardApp } from '../../src/dashboard/dashboardApp.js';
import { openDashboardState } from '../../src/dashboard/dashboardState.js';
import { startWorkerObservers } from '../../src/health/workerObservers.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { deliveryRig, HEADER, orderRow } from '../helpers/deliveryRig.js';

const PROMTOOL = '/usr/bin/promtool';
const TOKEN = 'metrics-test-token-0123456789';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `# TYPE name type` lines -> name -> type. */
function types(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('the /metrics exposition', () => {
  it('passes promtool, has no doubled prefix and no gauge named _total, and counts a headers timeout as no answer', async () => {
    if (!existsSync(PROMTOOL))
      throw new Error(
        `This test needs Debian's prometheus package for ${PROMTOOL} (apt-get install -y prometheus; .ci/run does this).`,
      );
    const rig = await deliveryRig(
      'metrics',
      {},
      { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '1000', BULKORDER_DASHBOARD_TOKEN: TOKEN },
    );
    cleanups.push(() => rig.close());
    const observers = await startWorkerObservers(rig.config, rig.logger, { httpPort: 0, pollMs: 200 });
    cleanups.push(() => observers.close());
    const worker = await startBusinessDelivery(rig.config, rig.logger, {
      prefix: rig.prefix,
      metrics: observers.metrics,
    });
    cleanups.push(() => worker.close());
    // The first order POST gets no answer in time (held), the second a 422 (dead-lettered).
    rig.simulator.setFaults({
      script: [
        { status: 200, noAnswer: true, path: 'orders' },
        { status: 422, body: { code: 'QUANTITY_LIMIT', message: 'too many' }, path: 'orders' },
      ],
    });
    const imported = await rig.importFile(
      await rig.writeFile('two.csv', [HEADER, orderRow('M1'), orderRow('M2'), ''].join('\n')),
    );
    await followBatch(rig.services.batches, imported.batchId, { timeoutMs: 20_000 });

    const text = await (await fetch(`${observers.url}/metrics`)).text();
    const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.status).toBe(0);
    const typed = types(text);
    expect(typed.get('bulkorder_process_cpu_seconds_total')).toBe('counter');
    expect([...typed.keys()].filter((name) => name.startsWith('bulkorder_process_process_'))).toEqual([]);
    expect([...typed].filter(([name, type]) => name.endsWith('_total') && type !== 'counter')).toEqual([]);
    expect(text).toMatch(/^bulkorder_api_no_answer_total\{api="business",code="HEADERS_TIMEOUT"\} 1$/m);
    expect(text).toMatch(/^bulkorder_api_refusals_total\{api="business",status="422",code="QUANTITY_LIMIT"\} 1$/m);
    expect(text).not.toMatch(/^bulkorder_api_refusals_total\{[^}]*status="none"/m);
  }, 60_000);

  it("the dashboard's /metrics needs its token; /healthz and /readyz do not", async () => {
    const rig = await deliveryRig('metrics-token', {}, { BULKORDER_DASHBOARD_TOKEN: TOKEN });
    cleanups.push(() => rig.close());
    const state = await openDashboardState(rig.config, rig.logger);
    cleanups.push(() => state.close());
    const app = dashboardApp(state, { readOnly: false, shuttingDown: () => false });
    expect((await app.request('/metrics')).status).toBe(401);
    const scraped = await app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('bulkorder_dead_letters 0');
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(200);
  });
});
