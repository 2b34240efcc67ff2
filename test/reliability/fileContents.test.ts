import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterEach, describe, expect, it } from 'vitest';
import type { OrderPayload } from '../../src/ingest/types.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('awkward file contents, imported end to end', () => {
  it('a UTF-8 BOM, mixed line endings and a =HYPERLINK cell: every order right, the formula neutralised in what we write', async () => {
    rig = await deliveryRig('contents');
    const bad =
      'MIX-4,1001,Anna,de Vries,Keizersgracht,12,1015 CX,Amsterdam,NL,nl,"=HYPERLINK(""http://evil.example"",""click"")",+31612345678,5001,1';
    const text =
      '\uFEFF' +
      HEADER +
      '\r\n' +
      orderRow('MIX-1') +
      '\n' +
      orderRow('MIX-2') +
      '\r' +
      orderRow('MIX-3') +
      '\r\n' +
      bad +
      '\n';
    const file = await rig.writeFile('mixed.csv', text);
    await rig.startWorker(); // in this process: what is tested is how the file is read
    const importer = await runCli(['import', file, '--wait', '--timeout', '120'], rig.env);
    expect(importer.code).toBe(4); // one row rejected
    expect(importer.output).toMatch(/3 delivered, 0 dead-lettered, 0 held/);
    const results = await readFile(join(rig.dir, 'mixed.csv.results.csv'), 'utf8');
    expect(results).toMatch(/MIX-2,3,delivered/);
    expect(results).toMatch(/MIX-3,4,delivered/); // the CR-only line ending counted as a line
    const rejects = await readFile(join(rig.dir, 'mixed.csv.rejects.csv'), 'utf8');
    expect(rejects).toContain(`'=HYPERLINK`);
    expect(rejects).not.toMatch(/(^|,)"?=HYPERLINK/m);
    expect(results).not.toMatch(/(^|,)"?=/m);
    recordReliability({
      fault: 'UTF-8 BOM, CRLF/LF/CR mixed, a =HYPERLINK(...) cell',
      behaviour: 'read right, line numbers right; the formula cell rejected and written back neutralised',
      orders: 4,
      lost: 0,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 180_000);

  it('windows-1252 text: refused with a hint as UTF-8, delivered with the right letters with --encoding windows-1252', async () => {
    rig = await deliveryRig('ansi');
    const row = orderRow('ANSI-1').replace('Anna,de Vries,Keizersgracht', 'Zoë,Müller,Kärntner Straße');
    const file = join(rig.dir, 'ansi.csv');
    await writeFile(file, iconv.encode(`${HEADER}\r\n${row}\r\n`, 'windows-1252'));
    const refused = await runCli(['import', file], rig.env);
    expect(refused.code).toBe(3);
    expect(refused.output).toMatch(/--encoding windows-1252/);

    await rig.startWorker(); // in this process: what is tested is how the file is read
    const importer = await runCli(
      ['import', file, '--encoding', 'windows-1252', '--wait', '--timeout', '120'],
      rig.env,
    );
    expect(importer.code, importer.output).toBe(0);
    const stored = rig.simulator.orders().map((o) => (o.payload as OrderPayload).recipient.address);
    expect(stored).toEqual([
      expect.objectContaining({ firstName: 'Zoë', lastName: 'Müller', street: 'Kärntner Straße' }),
    ]);
    // Its results file is written in its dialect (windows-1252, no BOM), like its rejects would be.
    const results = await readFile(`${file}.results.csv`);
    expect([...results.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect(iconv.decode(results, 'windows-1252')).toMatch(/ref\.1001\.ANSI-1,ANSI-1,2,delivered/);
    recordReliability({
      fault: 'windows-1252 text (an Excel "ANSI" export)',
      behaviour: 'refused as UTF-8 with a hint (exit 3); delivered with the right letters with --encoding windows-1252',
      orders: 1,
      lost: 0,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 180_000);
});
