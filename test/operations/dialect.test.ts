/**
 * Issue 33: files speak the input's dialect. A Dutch Excel file (`;`, BOM) gets `;` and a BOM back in its
 * rejects, its results and its dead-letter export, so Excel opens them in columns; a windows-1252 file
 * gets windows-1252; BULKORDER_OUTPUT_* chooses otherwise. Real Redis, the simulator, the CLI.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const BOM = [0xef, 0xbb, 0xbf];
const badPhone = (ref: string) => orderRow(ref).replace(/,\+31[0-9]+,/, ',12345,');
/** The file as a spreadsheet reads it with `delimiter`: every row's cells. */
function cells(bytes: Buffer, delimiter: string, encoding = 'utf8'): string[][] {
  return parse(iconv.decode(bytes, encoding).replace(/^\uFEFF/, ''), { delimiter, relax_column_count: true });
}

describe('results, rejects and dead-letter exports speak the input dialect', () => {
  it('a Dutch Excel file (";" and a BOM) gets ";" and a BOM back in its rejects, results and dead-letter export', async () => {
    rig = await deliveryRig('dialect-nl');
    const rows = [HEADER, orderRow('NL-1'), orderRow('NL-2', 5999), badPhone('NL-3')];
    const file = join(rig.dir, 'bestellingen.csv');
    await writeFile(file, '\uFEFF' + rows.map((row) => row.replaceAll(',', ';')).join('\r\n') + '\r\n');
    await rig.startWorker();
    const imported = await runCli(['import', file, '--wait'], rig.env);
    expect(imported.code).toBe(4);
    const exported = await runCli(['dead-letters', 'export', '--out', join(rig.dir, 'fix.csv')], rig.env);
    expect(exported.output).toContain('";", UTF-8 with BOM');

    for (const name of ['bestellingen.csv.rejects.csv', 'bestellingen.csv.results.csv', 'fix.csv']) {
      const bytes = await readFile(join(rig.dir, name));
      expect([...bytes.subarray(0, 3)], name).toEqual(BOM);
      const [header, ...body] = cells(bytes, ';');
      expect(header!.length, name).toBeGreaterThan(5); // in columns, not one column of text
      expect(body.length, name).toBeGreaterThan(0);
      expect(body.every((row) => row.length === header!.length)).toBe(true);
    }
    const results = cells(await readFile(join(rig.dir, 'bestellingen.csv.results.csv')), ';');
    expect(results.slice(1).map((r) => [r[1], r[3]])).toEqual([
      ['NL-1', 'delivered'],
      ['NL-2', 'dead-lettered'],
      ['NL-3', 'rejected'],
    ]);
    // The fixed export imports again as it is (the dialect is detected from it).
    expect((await runCli(['validate', join(rig.dir, 'fix.csv')], rig.env)).code).toBe(0);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
  });

  it('a windows-1252 file gets windows-1252 back; BULKORDER_OUTPUT_* writes another dialect on request', async () => {
    rig = await deliveryRig('dialect-ansi');
    const file = join(rig.dir, 'ansi.csv');
    const text = [HEADER, badPhone('A-1').replace('de Vries', 'Müller')].join('\r\n') + '\r\n';
    await writeFile(file, iconv.encode(text, 'windows-1252'));
    expect((await runCli(['validate', file, '--encoding', 'windows-1252'], rig.env)).code).toBe(4);
    const ansi = await readFile(`${file}.rejects.csv`);
    expect(ansi.includes(Buffer.from([0xfc]))).toBe(true); // ü as windows-1252 writes it
    expect(ansi.includes(Buffer.from('ü', 'utf8'))).toBe(false);
    expect([...ansi.subarray(0, 3)]).not.toEqual(BOM);
    expect(cells(ansi, ',', 'windows-1252')[1]).toContain('Müller');

    const chosen = await runCli(['validate', file, '--encoding', 'windows-1252'], {
      ...rig.env,
      BULKORDER_OUTPUT_DELIMITER: ';',
      BULKORDER_OUTPUT_ENCODING: 'utf-8',
      BULKORDER_OUTPUT_BOM: 'yes',
    });
    expect(chosen.code).toBe(4);
    const utf8 = await readFile(`${file}.rejects.csv`);
    expect([...utf8.subarray(0, 3)]).toEqual(BOM);
    expect(cells(utf8, ';')[1]).toContain('Müller');
  });
});
