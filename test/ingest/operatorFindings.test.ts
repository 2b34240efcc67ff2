import { afterEach, describe, expect, it } from 'vitest';
import { errorList, HEADER, readAll, rejected, row, tempDir, valid } from './ingestHelpers.js';

/** Issue 23's smaller ingest findings: what a new user's files did, each a test. */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function file(name: string, content: string): Promise<string> {
  const t = await tempDir();
  cleanups.push(t.cleanup);
  return t.file(name, content);
}

/** The same rows with another delimiter (no value in `row()` holds one). */
function withDelimiter(lines: string[], delimiter: string): string {
  return lines.map((l) => l.replaceAll(',', delimiter)).join('\r\n') + '\r\n';
}

describe('delimiters', () => {
  it("honours Excel's sep= first line, and line numbers stay the editor's", async () => {
    const text =
      'sep=;\r\n' + withDelimiter([HEADER, row({ orderRef: 'S-1' }), row({ orderRef: 'S-2', quantity: 'x' })], ';');
    const items = await readAll(await file('excel.csv', text));
    expect(valid(items).map((o) => o.orderRef)).toEqual(['S-1']);
    expect(errorList(items)).toEqual(['4:INTEGER_INVALID:quantity']);
  });

  it('detects |', async () => {
    const items = await readAll(
      await file('pipes.csv', withDelimiter([HEADER, row({ orderRef: 'P-1' }), row({ orderRef: 'P-2' })], '|')),
    );
    expect(valid(items).map((o) => o.orderRef)).toEqual(['P-1', 'P-2']);
    expect(rejected(items)).toEqual([]);
  });

  it('another delimiter gets a --delimiter hint, not a --map one', async () => {
    const path = await file('colons.csv', withDelimiter([HEADER, row()], ':'));
    const error = await readAll(path).then(
      () => undefined,
      (e: unknown) => e as { code: string; exitCode: number; message: string },
    );
    expect(error).toMatchObject({ code: 'DELIMITER_UNKNOWN', exitCode: 3 });
    expect(error!.message).toContain("--delimiter ':'");
    expect(error!.message).not.toContain('--map');
    expect(error!.message).toContain('line 1');
  });
});

describe('one product on two lines of an order', () => {
  const lines = [
    HEADER,
    row({ orderRef: 'M-1', productId: '5001', quantity: '2' }),
    row({ orderRef: 'M-1', productId: '5002', quantity: '1' }),
    row({ orderRef: 'M-1', productId: '5001', quantity: '3' }),
  ];

  it('is merged into one line with the summed quantity and a note', async () => {
    const items = await readAll(await file('twice.csv', lines.join('\n') + '\n'));
    expect(rejected(items)).toEqual([]);
    const [order] = valid(items);
    expect(order!.payload.products).toEqual([
      { productId: 5001, quantity: 5 },
      { productId: 5002, quantity: 1 },
    ]);
    expect(order!.lines).toEqual([2, 3, 4]);
    expect(order!.notes).toContainEqual(
      expect.stringMatching(
        /^line 4: productId PRODUCTS_MERGED: productId 5001 is also on line 2: one line sent, quantity 5/,
      ),
    );
  });

  it('is refused under --strict-products', async () => {
    const items = await readAll(await file('twice.csv', lines.join('\n') + '\n'), { strictProducts: true });
    expect(errorList(items)).toEqual(['4:DUPLICATE_PRODUCT:productId']);
  });
});

describe('Excel\'s ="..." cells', () => {
  it('are unwrapped with a note', async () => {
    // As Excel writes the formula in a CSV: the cell quoted, its quotes doubled.
    const text =
      [
        HEADER,
        row({ orderRef: 'E-1' }).replace('+31612345678', '"=""+31612345678"""').replace(',1001,', ',"=""1001""",'),
      ].join('\n') + '\n';
    const items = await readAll(await file('excel-text.csv', text));
    expect(rejected(items)).toEqual([]);
    const [order] = valid(items);
    expect(JSON.stringify(order!.payload)).toContain('+31612345678');
    expect(order!.notes.filter((n) => n.includes('EXCEL_TEXT_UNWRAPPED'))).toHaveLength(2);
  });
});
