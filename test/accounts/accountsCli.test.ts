import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { samplesDir } from '../../src/paths.js';
import { COMPANY, CAFETARIAPLAN, deliveryRig, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
});

describe('bulkorder accounts import, worker and login, as a user runs them', () => {
  it('registers the sample employees, writes their customerIds, prints a login URL by e-mail and company, and exits 4 for rows that need attention', async () => {
    rig = await deliveryRig('accounts-cli', {}, CAFETARIAPLAN);
    const env = { ...rig.env, LOG_LEVEL: 'warn' };
    // Only Cafetariaplan credentials: the worker registers accounts and delivers no orders.
    const worker = startCli(['worker', '--concurrency', '3'], {
      ...env,
      BULKORDER_BUSINESS_CLIENT_ID: '',
      BULKORDER_BUSINESS_CLIENT_SECRET: '',
    });
    const employees = join(rig.dir, 'employees.csv');
    const mistakes = join(rig.dir, 'employees-mistakes.csv');
    await copyFile(join(samplesDir, 'employees.csv'), employees);
    await copyFile(join(samplesDir, 'employees-mistakes.csv'), mistakes);

    const imported = await runCli(['accounts', 'import', employees, '--wait', '--timeout', '120'], env);
    expect(imported.code).toBe(0);
    expect(imported.output).toMatch(/accounts 5: 5 valid, 0 rejected/);
    expect(imported.output).toMatch(/settled: 5 delivered, 0 dead-lettered, 0 held/);
    const results = parse<Record<string, string>>(await readFile(join(rig.dir, 'employees.csv.results.csv'), 'utf8'), {
      columns: true,
      bom: true,
    });
    expect(results).toHaveLength(5);
    for (const row of results)
      expect(row).toMatchObject({ outcome: 'delivered', customerId: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    const login = await runCli(['login', '--email', 'anna.devries@example.nl', '--company', COMPANY], env);
    expect(login.code).toBe(0);
    const stdout = login.output.split('\n').filter((line) => line.startsWith('http'));
    expect(stdout).toEqual([expect.stringMatching(new RegExp(`^${rig.simulator.url}/sso/\\S+$`))]);
    const unknown = await runCli(['login', '--email', 'nobody@example.nl', '--company', COMPANY], env);
    expect(unknown.code).toBe(4);
    expect(unknown.output).toMatch(/CUSTOMER_ID_UNKNOWN|no customerId for this employee/);
    const both = await runCli(['login', 'abc', '--email', 'anna.devries@example.nl'], env);
    expect(both.code).toBe(2);

    // One valid new employee, four rejected rows (one of them a second row of the valid one).
    const withMistakes = await runCli(['accounts', 'import', mistakes, '--wait', '--timeout', '120'], env);
    expect(withMistakes.code).toBe(4);
    expect(withMistakes.output).toMatch(/accounts 5: 1 valid, 4 rejected/);
    const rejects = await readFile(join(rig.dir, 'employees-mistakes.csv.rejects.csv'), 'utf8');
    expect(rejects).toMatch(/DUPLICATE_ACCOUNT/);
    expect(rejects).toMatch(/COMPANY_ID_INVALID/);
    const mixed = parse<Record<string, string>>(
      await readFile(join(rig.dir, 'employees-mistakes.csv.results.csv'), 'utf8'),
      { columns: true, bom: true },
    );
    expect(mixed.map((r) => [r.lines, r.outcome, r.email, r.errorCode])).toEqual([
      ['2', 'delivered', 'joost.dekker@example.nl', ''],
      ['3', 'rejected', 'not-an-email', 'EMAIL_INVALID'],
      ['4', 'rejected', 'lars.vos@example.nl', 'FIELD_REQUIRED LANGUAGE_CODE_INVALID'],
      ['5', 'rejected', 'mila.kok@example.nl', 'COMPANY_ID_INVALID'],
      ['6', 'rejected', 'Joost.Dekker@example.nl', 'DUPLICATE_ACCOUNT'],
    ]);
    expect(mixed[0]!.customerId).toMatch(/^[0-9a-f-]{36}$/);

    const status = await runCli(['accounts', 'status', '--json'], env);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.output.slice(status.output.indexOf('{'))) as {
      batches: { delivered: number }[];
      deadLetters: number;
    };
    expect(report.batches.map((b) => b.delivered).sort()).toEqual([1, 5]);
    expect(report.deadLetters).toBe(0);
    expect(rig.simulator.counters().ordersAccepted).toBe(0);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  }, 180_000);
});
