/**
 * Issue 37, item 7: a dashboard upload whose name cannot be a file (`.`, `..`, `CON`, a path,
 * control characters, a long name without extension) answered 500 with the spool's absolute path.
 * Over real HTTP to a running dashboard: each is 400 with a sentence naming what to do, no path.
 */
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

const TOKEN = 'upload-names-token-0123456789abcd';

let rig: DeliveryRig;
let dashboard: RunningDashboard;
let formToken: string;
const spools = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('bulkorder-upload-'));
let spoolsBefore: string[];

beforeAll(async () => {
  spoolsBefore = await spools();
  rig = await deliveryRig('upload-names', {}, { BULKORDER_DASHBOARD_TOKEN: TOKEN });
  dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
  const page = await (await fetch(`${dashboard.url}/upload`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  formToken = /data-csrf="([^"]+)"/.exec(page)![1]!;
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await rig?.close();
  expect(await spools()).toEqual(spoolsBefore);
});

async function upload(name: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${dashboard.url}/upload/file?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    body: [HEADER, orderRow('N1')].join('\n') + '\n',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'x-bulkorder-form-token': formToken,
      'content-type': 'application/octet-stream',
    },
  });
  return { status: response.status, text: await response.text() };
}

describe('upload names that cannot be files', () => {
  it.each([
    ['.', /is not a file name/],
    ['..', /is not a file name/],
    ['...', /is not a file name/],
    ['', /has no file name/],
    ['CON', /device name on Windows/],
    ['nul.csv', /device name on Windows/],
    ['COM1.txt', /device name on Windows/],
    ['../../etc/passwd', /is a path, not a file name/],
    ['C:\\Users\\x\\orders.csv', /is a path, not a file name/],
    ['orders\u0000.csv', /control characters/],
    ['orders\n.csv', /control characters/],
    ['orders?.csv', /no Windows file name may/],
    ['orders.csv.', /ends with a dot or a space/],
    ['x'.repeat(300), /longer than 120 characters/],
    ['é'.repeat(110) + '.csv', /longer than 120 characters \(or 200 bytes\)/],
    ['orders', /has no extension/],
    ['.csv', /has no extension/],
  ])('%j: 400, a sentence, no path', async (name, reason) => {
    const answer = await upload(name);
    expect(answer.status).toBe(400);
    const error = (JSON.parse(answer.text) as { error: string }).error;
    expect(error).toMatch(/^UPLOAD_NAME_INVALID: /);
    expect(error).toMatch(reason);
    expect(answer.text).not.toMatch(/\/tmp|bulkorder-upload-|Internal error/);
    expect(answer.text).not.toContain(tmpdir());
  });

  it('a good name (spaces, accents, a long one with its extension) is taken', async () => {
    const names = ['orders.csv', 'Bestellingen van mei (2).csv', 'commandes été.json', `${'n'.repeat(100)}.csv`];
    for (const name of names) {
      const answer = await upload(name);
      expect(answer.status, name).toBe(200);
      expect(answer.text).toMatch(/"next":"\/upload\//);
    }
    recordReliability({
      fault: 'dashboard uploads named ., .., CON, nul.csv, a path, with control characters, or long without extension',
      behaviour:
        '400 UPLOAD_NAME_INVALID with what to do, no path in the answer (it was 500 with the spool path); good names taken',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  });
});
