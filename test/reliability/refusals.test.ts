import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('refused configurations, as a user meets them (exit 2, the variable named)', () => {
  it.each([
    [
      'http:// to a host that is not loopback',
      { BULKORDER_BASE_URL: 'http://api.example.com' },
      /BULKORDER_BASE_URL: .*https/,
    ],
    [
      'production without the explicit choice',
      { BULKORDER_ENV: 'production', BULKORDER_BASE_URL: 'https://api.example.com' },
      /BULKORDER_CONFIRM_PRODUCTION/,
    ],
    [
      'production over http, even to loopback',
      { BULKORDER_ENV: 'production', BULKORDER_CONFIRM_PRODUCTION: 'yes', BULKORDER_BASE_URL: 'http://127.0.0.1:9' },
      /BULKORDER_BASE_URL: production accepts https/,
    ],
    ['a User-Agent that is a library name', { BULKORDER_USER_AGENT: 'undici-Node' }, /BULKORDER_USER_AGENT/],
    ['a missing client secret', { BULKORDER_BUSINESS_CLIENT_SECRET: '' }, /BULKORDER_BUSINESS_CLIENT_SECRET/],
  ])('worker refuses %s', async (_name, env, message) => {
    rig = await deliveryRig('refuse');
    // In-process: a refused worker ends before it listens for signals or opens a connection.
    const worker = await runCli(['worker'], { ...rig.env, ...env });
    expect(worker.code).toBe(2);
    expect(worker.output).toMatch(message);
    expect(rig.simulator.counters().tokenRequests.business).toBe(0);
    recordReliability({
      fault: `configuration: ${_name}`,
      behaviour: 'refused at start, exit 2, the variable named; nothing sent',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  });
});

describe('a full disk while writing results', () => {
  it('reports the write failure clearly; the orders are delivered and the results can be written again', async () => {
    rig = await deliveryRig('fulldisk');
    const file = await rig.writeFile('full.csv', [HEADER, orderRow('FULL-1'), orderRow('FULL-2')].join('\n') + '\n');
    await rig.startWorker(); // in this process: what is tested is the import's results file
    const importer = await runCli(['import', file, '--wait', '--results', '/dev/full'], rig.env);
    const exit = importer.code;
    expect(exit).not.toBe(0);
    expect(exit).not.toBe(1); // not an internal error: a message a person can act on
    expect(importer.output).toMatch(/\/dev\/full/);
    expect(importer.output).toMatch(/ENOSPC|no space/i);
    expect(rig.simulator.counters().ordersAccepted).toBe(2);
    expect(importer.output).toMatch(/run the same import with --wait again/);

    const again = await runCli(['import', file, '--wait'], rig.env);
    expect(again.code).toBe(0);
    const results = await readFile(join(rig.dir, 'full.csv.results.csv'), 'utf8');
    expect(results.match(/already-delivered/g)).toHaveLength(2);
    expect(rig.simulator.counters().ordersAccepted).toBe(2);
    recordReliability({
      fault: 'a full disk while writing the results file',
      behaviour: 'exit 5 with the path and what to do; the rerun wrote the results and sent nothing again',
      orders: 2,
      lost: 0,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 60_000);
});
