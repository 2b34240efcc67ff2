import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMPANY, CAFETARIAPLAN, deliveryRig, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
});

describe('dead letters and held accounts (bulkorder accounts dead-letters)', () => {
  it('lists, shows and retries dead-lettered accounts apart from orders', async () => {
    rig = await deliveryRig('accounts-parked', {}, CAFETARIAPLAN);
    const env = { ...rig.env, LOG_LEVEL: 'warn' };
    const file = join(rig.dir, 'staff.csv');
    await writeFile(
      file,
      `email,firstName,lastName,isoLanguageCode,companyId\nanna.devries@example.nl,Anna,de Vries,nl,${COMPANY}\nbram.jansen@example.nl,Bram,Jansen,nl,${COMPANY}\n`,
    );
    // The service refuses Anna once (a fault on its side), then would accept her.
    rig.simulator.setFaults({
      script: [{ path: 'accounts', status: 422, body: { code: 'PLAN_NOT_CONFIGURED', message: 'no budget plan yet' } }],
    });
    startCli(['worker', '--concurrency', '1'], env);
    const imported = await runCli(['accounts', 'import', file, '--wait', '--timeout', '120'], env);
    expect(imported.code).toBe(4);
    expect(imported.output).toMatch(/1 delivered, 1 dead-lettered/);

    const orders = await runCli(['dead-letters', 'list'], env);
    expect(orders.code).toBe(0);
    expect(orders.output).toMatch(/no dead letters/);
    const accounts = await runCli(['accounts', 'dead-letters', 'list', '--json'], env);
    expect(accounts.code).toBe(0);
    const listed = (
      JSON.parse(accounts.output.slice(accounts.output.indexOf('{'))) as {
        records: { key: string; code: string; httpStatus: number }[];
      }
    ).records;
    expect(listed).toEqual([expect.objectContaining({ code: 'PLAN_NOT_CONFIGURED', httpStatus: 422 })]);

    const retried = await runCli(['accounts', 'dead-letters', 'retry', '--all', '--wait', '--timeout', '120'], env);
    expect(retried.code).toBe(0);
    expect(rig.simulator.counters().accountsCreated).toBe(2);
    // The deprecated flag spelling still works.
    const after = await runCli(['dead-letters', 'list', '--accounts'], env);
    expect(after.code).toBe(0);
    expect(after.output).toMatch(/no dead letters/);
  }, 180_000);
});
