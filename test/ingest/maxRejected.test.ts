import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { importFile } from '../../src/importer/importFile.js';
import { ingestOptionsFromFlags } from '../../src/ingest/ingestFlags.js';
import { RejectsWriter } from '../../src/ingest/rejectsWriter.js';
import { validateFile } from '../../src/ingest/validateFile.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { runCli } from '../helpers/runCli.js';
import { ExitCode, UsageError } from '../../src/errors.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/**
 * 12,000 one-line orders, `bad` of them wrong, spread through the file: of every 4 rows, `bad / 3000`
 * are wrong. Wrong rows: a bad email (most), a bad quantity, a bad country, in 6:2:1 proportion.
 */
function mixedCsv(bad: number): string {
  const rows = [HEADER];
  let wrong = 0;
  for (let i = 1; i <= 12_000; i++) {
    const good = orderRow(`MR-${i}`);
    if (i % 4 !== 0 && wrong < bad) {
      wrong++;
      const cells = good.split(',');
      const kind = wrong % 9;
      if (kind < 6) cells[10] = 'not-an-email';
      else if (kind < 8) cells[13] = '-3';
      else cells[8] = 'XX';
      rows.push(cells.join(','));
    } else rows.push(good);
  }
  return rows.join('\n') + '\n';
}

async function ledgerKeys(r: DeliveryRig): Promise<number> {
  return (await r.services.redis.keys(`${r.prefix}:ledger:*`)).length;
}

async function jobCount(r: DeliveryRig): Promise<number> {
  const counts = await r.services.queue.getJobCounts(
    'waiting',
    'active',
    'delayed',
    'prioritized',
    'completed',
    'failed',
  );
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

describe('--max-rejected: a file that is mostly wrong is refused before anything is queued', () => {
  it('refuses 9,000 bad of 12,000 rows in validate and import (exit 3, top kinds named, nothing queued); 100% imports the valid rows', async () => {
    rig = await deliveryRig('maxrej');
    const file = await rig.writeFile('mostly-wrong.csv', mixedCsv(9_000));
    await rig.startWorker();

    const validate = await runCli(['validate', file], rig.env);
    expect(validate.code).toBe(ExitCode.fileRefused);
    expect(validate.stderr).toMatch(
      /of the first 1\d{4} rows \(7\d(\.\d)?%\) were rejected, more than the allowed 50%/,
    );
    expect(validate.stderr).toMatch(
      /top error kinds: \d+ \w+ \(email\), \d+ \w+ \(quantity\), \d+ \w+ \(countryCode\)/,
    );
    expect(validate.stderr).toMatch(/--max-rejected 100%/);
    expect(existsSync(RejectsWriter.defaultPath(file))).toBe(false);

    const importCli = await runCli(['import', file, '--json'], rig.env);
    expect(importCli.code).toBe(ExitCode.fileRefused);
    expect(JSON.parse(importCli.stdout)).toMatchObject({ refused: { code: 'TOO_MANY_REJECTED', exitCode: 3 } });
    expect(importCli.stderr).toMatch(/were rejected, more than the allowed 50%/);
    expect(await jobCount(rig)).toBe(0);
    expect(await ledgerKeys(rig)).toBe(0);
    expect(rig.simulator.counters().ordersAccepted).toBe(0);
    expect(existsSync(RejectsWriter.defaultPath(file))).toBe(false);

    const validated = await validateFile(file, await ingestOptionsFromFlags({ maxRejected: '100%' }), ORDERS);
    expect(validated.exitCode).toBe(ExitCode.needsAttention);
    expect([validated.summary.valid, validated.summary.rejected]).toEqual([3_000, 9_000]);

    const imported = await runCli(['import', file, '--max-rejected', '100%', '--json'], rig.env);
    expect(imported.code).toBe(ExitCode.needsAttention);
    expect(JSON.parse(imported.stdout)).toMatchObject({ counts: { rows: 12_000, valid: 3_000, rejected: 9_000 } });
    expect(await ledgerKeys(rig)).toBe(3_000);
  }, 180_000);

  it('a file under the threshold is read as before: 5,000 bad of 12,000 rows validate with exit 4 and import the valid rows', async () => {
    rig = await deliveryRig('maxrej-under');
    const file = await rig.writeFile('some-wrong.csv', mixedCsv(5_000));
    const options = await ingestOptionsFromFlags({});
    const validated = await validateFile(file, options, ORDERS);
    expect(validated.exitCode).toBe(ExitCode.needsAttention);
    expect([validated.summary.valid, validated.summary.rejected]).toEqual([7_000, 5_000]);
    const imported = await importFile(file, options, rig.services.pipeline(rig.logger));
    expect([imported.counts.valid, imported.counts.rejected, imported.counts.enqueued]).toEqual([7_000, 5_000, 7_000]);
    expect(await ledgerKeys(rig)).toBe(7_000);
    expect(await jobCount(rig)).toBeGreaterThan(0);
  }, 180_000);

  it('--max-rejected takes 0% to 100%, with or without the sign; anything else is a usage error', async () => {
    expect((await ingestOptionsFromFlags({ maxRejected: '25%' })).maxRejectedPercent).toBe(25);
    expect((await ingestOptionsFromFlags({ maxRejected: '0' })).maxRejectedPercent).toBe(0);
    for (const bad of ['150%', 'half', '-1', ''])
      await expect(ingestOptionsFromFlags({ maxRejected: bad })).rejects.toBeInstanceOf(UsageError);
  });
});
