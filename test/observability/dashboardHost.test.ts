import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { deliveryRig, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

let rig: DeliveryRig | undefined;
let dashboard: RunningDashboard | undefined;
afterEach(async () => {
  await dashboard?.close();
  dashboard = undefined;
  await rig?.close();
  rig = undefined;
});

/** GET with a Host header of our choosing (fetch would not send a forged one). */
function get(url: string, path: string, host: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the dashboard answers only to the Host names it serves (DNS rebinding, issue 26 item 8)', () => {
  it("a forged Host gets 421 and no data; loopback names, BULKORDER_DASHBOARD_URL's host and BULKORDER_DASHBOARD_HOSTS are answered", async () => {
    rig = await deliveryRig(
      'dash-host',
      {},
      {
        BULKORDER_DASHBOARD_URL: 'https://dash.example.com/bulkorder',
        BULKORDER_DASHBOARD_HOSTS: 'ops.internal,*.corp.example',
      },
    );
    dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
    const port = new URL(dashboard.url).port;

    const refused: Record<string, number> = {};
    for (const host of [
      `rebind.attacker.example:${port}`,
      'rebind.attacker.example',
      `dash.example.com.attacker.example`,
      `localhost.attacker.example:${port}`,
      `evil@127.0.0.1:${port}`,
    ]) {
      for (const path of ['/', '/dead-letters/export.csv', '/batches', '/search?q=a']) {
        const answer = await get(dashboard.url, path, host);
        refused[`${host} ${path}`] = answer.status;
        expect(answer.body, `${host} ${path}`).not.toMatch(/<html|orderRef/i);
      }
    }
    // Node's own parser answers 400 to a Host it finds malformed (user info); every well-formed foreign name gets 421.
    expect(Object.entries(refused).filter(([key, status]) => status !== (key.startsWith('evil@') ? 400 : 421))).toEqual(
      [],
    );

    const answered: Record<string, number> = {};
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      `app.localhost:${port}`,
      'dash.example.com',
      'ops.internal:8443',
      'a.corp.example',
    ]) {
      answered[host] = (await get(dashboard.url, '/', host)).status;
    }
    expect(new Set(Object.values(answered))).toEqual(new Set([200]));
    // Probes send whatever Host they like; those paths carry no personal data.
    expect((await get(dashboard.url, '/healthz', 'pod-10-1-2-3')).status).toBe(200);
    recordReliability({
      fault: 'DNS rebinding: a page of another site reads the loopback dashboard under its own Host name',
      behaviour:
        "421 without data for every Host the dashboard does not serve; loopback, BULKORDER_DASHBOARD_URL's and BULKORDER_DASHBOARD_HOSTS answered",
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  });
});
