import { execFileSync } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RejectsWriter } from '../../src/ingest/rejectsWriter.js';
import { neutralizeCell } from '../../src/ingest/csvCells.js';
import { validateFile } from '../../src/ingest/validateFile.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { HEADER, readAll, rejected, row, tempDir, valid } from './ingestHelpers.js';
import { JAN_FLAT } from '../helpers/fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const csv = (...rows: string[]): string => [HEADER + ',note', ...rows.map((r) => r + ',')].join('\n') + '\n';

describe('RejectsWriter', () => {
  it('writes <name>.rejects.csv beside the input by default, the extension kept so two inputs never share one', () => {
    expect(RejectsWriter.defaultPath('/data/in/orders.csv')).toBe('/data/in/orders.csv.rejects.csv');
    expect(RejectsWriter.defaultPath('orders.ndjson')).toBe('orders.ndjson.rejects.csv');
    expect(RejectsWriter.defaultPath('x.csv')).not.toBe(RejectsWriter.defaultPath('x.json'));
  });

  it('writes original columns plus line, codes and reasons; UTF-8 with BOM as the input; formulas neutralised', async () => {
    const file = await tmp.file(
      'orders.csv',
      '\uFEFF' +
        csv(
          row({ orderRef: 'A' }),
          row({ orderRef: 'B', quantity: '-3', lastName: '=HYPERLINK("http://x","y")', email: 'nope' }),
          row({ orderRef: 'C', productId: '5001' }),
          row({ orderRef: 'C', productId: '5002', city: 'Utrecht' }),
        ),
    );
    const result = await validateFile(file, {}, ORDERS);
    expect(result.exitCode).toBe(4);
    expect(result.rejectsPath).toBe(join(tmp.dir, 'orders.csv.rejects.csv'));
    const bytes = await readFile(result.rejectsPath!);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8').slice(1);
    expect(text).toContain('\r\n');
    const [header, ...rows] = parse(text);
    expect(header).toEqual([...HEADER.split(','), 'note', 'reject_line', 'reject_codes', 'reject_reasons']);
    expect(rows.map((r) => r.slice(-3, -1))).toEqual([
      ['3', 'FORMULA_TEXT EMAIL_INVALID INTEGER_NOT_POSITIVE'],
      ['4', 'ORDER_NOT_SENT'],
      ['5', 'RECIPIENT_MISMATCH'],
    ]);
    const b = rows[0]!;
    expect(b[3]).toBe(`'=HYPERLINK("http://x","y")`);
    expect(b[11]).toBe("'+31612345678");
    expect(b[13]).toBe("'-3");
    expect(b.at(-1)).toContain("quantity '-3' must be 1 or more");
    expect(rows[1]!.at(-1)).toContain('line 5 of this order has errors');
  });

  it('produces a file that imports again once fixed; the reject columns are ignored', async () => {
    const file = await tmp.file(
      'orders.csv',
      csv(row({ orderRef: 'A', quantity: '1.5', telephoneNumber: '+31 6 1234 5678' }), row({ orderRef: 'B' })),
    );
    const { rejectsPath } = await validateFile(file, {}, ORDERS);
    const fixed = (await readFile(rejectsPath!, 'utf8')).replace(',1.5,', ',2,');
    const again = await tmp.file('fixed.csv', fixed);
    const items = await readAll(again);
    expect(rejected(items)).toEqual([]);
    const [order] = valid(items);
    expect(order!.key).toBe('ref.1001.A');
    expect(order!.payload.recipient.telephoneNumber).toBe('+31612345678');
    expect(order!.payload.products).toEqual([{ productId: 5001, quantity: 2 }]);
    expect(order!.notes.some((n) => n.includes('apostrophe'))).toBe(true);
  });

  it('round-trips rows of a JSON file without orderRef: each stays an order of its own', async () => {
    const flat = {
      businessCustomerId: 1001,
      ...JAN_FLAT,
      productId: 5001,
      quantity: 0,
    };
    const file = await tmp.file(
      'rows.ndjson',
      `${JSON.stringify(flat)}\n${JSON.stringify({ ...flat, productId: 5002 })}\n`,
    );
    const { rejectsPath } = await validateFile(file, {}, ORDERS);
    const fixed = await tmp.file(
      'fixed.csv',
      (await readFile(rejectsPath!, 'utf8')).replace(/,0,(\d+),INTEGER_NOT_POSITIVE/g, ',1,$1,INTEGER_NOT_POSITIVE'),
    );
    const orders = valid(await readAll(fixed));
    expect(orders.map((o) => [o.orderRef, o.key.slice(0, 4), o.lines])).toEqual([
      [undefined, 'sha.', [2]],
      [undefined, 'sha.', [3]],
    ]);
    // in an ordinary CSV an empty orderRef is still an error
    const plain = await tmp.file('plain.csv', csv(row({ orderRef: '' })));
    expect(rejected(await readAll(plain))[0]?.errors[0]?.code).toBe('ORDER_REF_MISSING');
  });

  it('keeps the input delimiter, so Excel opens it like the input', async () => {
    const file = await tmp.file('nl.csv', csv(row({ quantity: '0' })).replace(/,/g, ';'));
    const { rejectsPath } = await validateFile(file, {}, ORDERS);
    const [header] = (await readFile(rejectsPath!, 'utf8')).split('\r\n');
    expect(header).toContain(';reject_line;reject_codes;reject_reasons');
  });

  it('writes nothing without rejects, and removes its own stale file from an earlier run', async () => {
    const out = join(tmp.dir, 'orders.csv.rejects.csv');
    const file = await tmp.file('orders.csv', csv(row({ quantity: 'x' })));
    expect((await validateFile(file, {}, ORDERS)).rejectsPath).toBe(out);
    await writeFile(file, csv(row()));
    const result = await validateFile(file, {}, ORDERS);
    expect(result.exitCode).toBe(0);
    expect(result.rejectsPath).toBeUndefined();
    await expect(readFile(out)).rejects.toThrow();
    // a file of someone else's at that path is left alone
    await writeFile(out, 'precious\n');
    await validateFile(file, {}, ORDERS);
    expect(await readFile(out, 'utf8')).toBe('precious\n');
  });

  it('never leaves a half-written file under the real name', async () => {
    const out = join(tmp.dir, 'x.rejects.csv');
    const writer = new RejectsWriter(out, ['a']);
    await writer.write({
      kind: 'rejected',
      file: 'x.csv',
      lines: [2],
      rows: [{ a: '1' }],
      rowLines: [2],
      errors: [{ line: 2, code: 'FIELD_REQUIRED', message: 'm' }],
    });
    await expect(readFile(out)).rejects.toThrow();
    await writer.abort();
    await expect(readFile(out)).rejects.toThrow();
  });

  it('writes into a pipe or device directly, never renaming a file onto it (as root that would replace /dev/full)', async () => {
    const fifo = join(tmp.dir, 'rejects.fifo');
    execFileSync('mkfifo', [fifo]);
    const received = readFile(fifo, 'utf8'); // the reader at the pipe's other end
    const writer = new RejectsWriter(fifo, ['a']);
    await writer.write({
      kind: 'rejected',
      file: 'x.csv',
      lines: [2],
      rows: [{ a: '1' }],
      rowLines: [2],
      errors: [{ line: 2, code: 'FIELD_REQUIRED', message: 'm' }],
    });
    await writer.close();
    expect(await received).toContain('reject_line');
    expect((await stat(fifo)).isFIFO()).toBe(true);
  });
});

describe('neutralizeCell', () => {
  it('prefixes cells that a spreadsheet would run as a formula', () => {
    for (const cell of ['=1+1', '+31612345678', '-3', '@SUM(A1)', '\tx', '\rx'])
      expect(neutralizeCell(cell)).toBe(`'${cell}`);
    for (const cell of ['1001', 'Jan', '', ' =x', "'=x"]) expect(neutralizeCell(cell)).toBe(cell);
  });
});
