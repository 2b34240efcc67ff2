import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openOrderSource, type IngestOptions } from '../../src/ingest/openOrderSource.js';
import { validateFile } from '../../src/ingest/validateFile.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { ClosedKeys } from '../../src/ingest/closedKeys.js';
import { ShapeScanner, type ShapeVerdict } from '../../src/ingest/shapeScan.js';
import { StreamGroups } from '../../src/ingest/streamGroups.js';
import { looseCell, orderShapeKey } from '../../src/ingest/orderUnit.js';
import { canonicalPayload } from '../../src/ingest/orderKey.js';
import { readCsvBatches } from '../../src/ingest/readCsvRecords.js';
import { NotUnquotedError, readPlainCsvBatches, readUnquotedCsvBatches } from '../../src/ingest/readPlainCsv.js';
import { resolveColumns } from '../../src/ingest/resolveColumns.js';
import type { IngestItem } from '../../src/ingest/types.js';
import { mulberry32 } from '../../bench/generateOrders.js';
import { HEADER, readAll, rejected, row, tempDir, valid } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const byLine = (items: readonly IngestItem[]): IngestItem[] =>
  [...items].sort((a, b) => (a.lines[0] ?? 0) - (b.lines[0] ?? 0));

/** Orders of 1-4 lines, next to each other; every 7th order has a bad e-mail on its last line, some cells quoted. */
function groupedRows(orders: number): string[] {
  const rows: string[] = [];
  for (let o = 1; o <= orders; o++) {
    const lines = 1 + (o % 4);
    for (let l = 0; l < lines; l++) {
      const bad = o % 7 === 0 && l === lines - 1;
      rows.push(
        row({
          orderRef: `G-${o}`,
          businessCustomerId: String(1001 + (o % 10)),
          street: o % 5 === 0 ? 'Rue de la Paix, Bâtiment B\nEtage 2' : 'Keizersgracht',
          email: bad ? 'no-at-sign.example.nl' : `p${o}@example.nl`,
          productId: String(5001 + l),
        }),
      );
    }
  }
  return rows;
}

/** The same rows in a seeded random order (each row is one line here but for the quoted ones, which stay whole). */
function shuffled(rows: readonly string[], seed: number): string[] {
  const out = [...rows];
  const random = mulberry32(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const file = (rows: readonly string[]): string => [HEADER, ...rows].join('\n') + '\n';

describe('a large CSV file grouped in one stream', () => {
  it('a grouped file streams: items come while it is read, no spill folder, the same items as in memory', async () => {
    const path = await tmp.file('grouped.csv', file(groupedRows(600)));
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const options = { spillThresholdBytes: 0, tmpDir: spill, streamWindowRows: 50, chunkBytes: 2048 };
    const source = await openOrderSource(path, options);
    const items: IngestItem[] = [];
    let rowsAtFirstItem: number | undefined;
    for await (const item of source.items()) {
      rowsAtFirstItem ??= source.stats().rows;
      items.push(item);
      expect(await readdir(spill)).toEqual([]);
    }
    expect(source.streamed()).toBe(true);
    expect(source.stats().rows).toBe(1500);
    expect(rowsAtFirstItem).toBeLessThan(100); // the first order left once 50 rows passed it (and a read of 2 KiB), not at the end
    const memory = await readAll(path);
    expect(byLine(items)).toEqual(byLine(memory));
    expect(valid(items).length).toBeGreaterThan(400);
    expect(rejected(items).length).toBeGreaterThan(50);
  });

  it("with the scan's group ends, an order leaves at its last row, not a window later, in the order of last rows", async () => {
    const path = await tmp.file('ends.csv', file(groupedRows(200)));
    const options = { spillThresholdBytes: 0, tmpDir: tmp.dir, streamWindowRows: 50, chunkBytes: 256 };
    const source = await openOrderSource(path, options);
    const items: IngestItem[] = [];
    let rowsAtFirstItem: number | undefined;
    for await (const item of source.items()) {
      rowsAtFirstItem ??= source.stats().rows;
      items.push(item);
    }
    expect(source.streamed()).toBe(true);
    expect(rowsAtFirstItem).toBeLessThan(10); // the first order has two rows; the window alone holds it for 50 more
    const lastLines = items.map((item) => Math.max(...item.lines));
    expect(lastLines).toEqual([...lastLines].sort((a, b) => a - b));
    expect(byLine(items)).toEqual(byLine(await readAll(path)));
  });

  it('its shuffled copy goes through spill files and gives the same orders and rejected rows; the summary says it was read twice', async () => {
    const rows = groupedRows(600);
    const grouped = await tmp.file('grouped.csv', file(rows));
    const mixed = await tmp.file('shuffled.csv', file(shuffled(rows, 3)));
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const options = { spillThresholdBytes: 0, tmpDir: spill, streamWindowRows: 50 };
    const a = await validateFile(grouped, { ...options, out: join(tmp.dir, 'a.rejects.csv') }, ORDERS);
    const b = await validateFile(mixed, { ...options, out: join(tmp.dir, 'b.rejects.csv') }, ORDERS);
    expect(a.source.warnings).not.toContainEqual(expect.stringMatching(/read twice/));
    expect(b.source.warnings).toContainEqual(expect.stringMatching(/lie more than 50 rows apart .* read twice/));
    // Products in line order differ between the two files; the ledger's fingerprint takes them as a set, as here.
    const orders = async (path: string): Promise<[string, string][]> =>
      valid(await readAll(path, options))
        .map((order): [string, string] => [order.key, canonicalPayload(order.payload)])
        .sort();
    const rejectedRows = async (path: string): Promise<string[]> =>
      rejected(await readAll(path, options))
        .flatMap((record) => record.rows.map((cells) => JSON.stringify(cells)))
        .sort();
    expect(await orders(mixed)).toEqual(await orders(grouped));
    expect(await rejectedRows(mixed)).toEqual(await rejectedRows(grouped));
    expect(a.summary.valid).toBe(b.summary.valid);
    expect(await readdir(spill)).toEqual([]);
  });

  it('a spread file is still scanned to its end: plainly quoted, its spill read skips csv-parse and gives the items csv-parse gives', async () => {
    const rows = shuffled(groupedRows(400), 5); // quoted streets with line breaks, bad e-mails
    const plain = await tmp.file('plain.csv', file(rows));
    // The same rows with one value csv-parse reads (relaxed) but the plain reader does not model, after the spread row.
    const oddRow = row({ orderRef: 'Z-1' }).replace('Keizersgracht', 'Keizers"gracht'); // a quote inside an unquoted value
    const odd = await tmp.file('odd.csv', file([...rows, oddRow]));
    const options: IngestOptions = { spillThresholdBytes: 0, tmpDir: tmp.dir, streamWindowRows: 20 };
    const plainScan = (await (await openOrderSource(plain, options)).scan()).shape;
    expect(plainScan).toMatchObject({ mode: 'spill', reason: 'spread', plain: true });
    const oddScan = (await (await openOrderSource(odd, options)).scan()).shape;
    expect(oddScan).toMatchObject({ mode: 'spill', reason: 'spread', plain: false });
    expect(oddScan).toMatchObject({ row: (plainScan as { row: number }).row });
    for (const path of [plain, odd]) {
      const spilled = await readAll(path, options);
      const parsed = await readAll(path, { ...options, streamWindowRows: 0 }); // no scan: the spill read through csv-parse
      expect(byLine(spilled)).toEqual(byLine(parsed));
      expect(rejected(spilled).length).toBeGreaterThan(10);
    }
  });

  it('an order whose lines lie within the window streams; one line past it sends the file to the spill path', async () => {
    const fill = (from: number, count: number): string[] =>
      Array.from({ length: count }, (_, i) => row({ orderRef: `F-${from + i}` }));
    const within = await tmp.file(
      'within.csv',
      file([row({ orderRef: 'A' }), ...fill(0, 9), row({ orderRef: 'A', productId: '5002' })]),
    );
    const past = await tmp.file(
      'past.csv',
      file([row({ orderRef: 'A' }), ...fill(0, 12), row({ orderRef: 'A', productId: '5002' })]),
    );
    const options: IngestOptions = { spillThresholdBytes: 0, tmpDir: tmp.dir, streamWindowRows: 10 };
    const inWindow = await openOrderSource(within, options);
    expect((await inWindow.scan()).shape).toEqual({ mode: 'stream', window: 10 });
    const outside = await openOrderSource(past, options);
    expect((await outside.scan()).shape).toEqual({ mode: 'spill', reason: 'spread', row: 14, plain: true });
    for (const path of [within, past]) {
      const order = valid(await readAll(path, options)).find((item) => item.orderRef === 'A')!;
      expect(order.payload.products.map((p) => p.productId)).toEqual([5001, 5002]);
    }
  });

  it('whatever the quoting, spacing and line ends: whenever the scan says stream, the items equal those read in memory', async () => {
    const random = mulberry32(35);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const fields = HEADER.split(',');
    const base = row().split(','); // the base values hold no comma or quote
    // Cells as written in the file: forms of one orderRef or customer id that read as the same value (or another).
    const refForms = (ref: string): string[] => [
      ref,
      ` ${ref}`,
      `${ref} `,
      `"${ref}"`,
      `"=""${ref}"""`,
      `'${ref}`,
      `"${ref},x"`,
      '',
    ];
    const idForms = ['1001', '01001', ' 1001', '"1001"', '1002', '"=""1001"""', ''];
    const streetForms = ['Damrak', '"Damrak, 1\nhoog"', '"Dam ""rak"""'];
    let streamed = 0;
    let spilled = 0;
    for (let round = 0; round < 80; round++) {
      const lines: string[] = [];
      const jitter = pick([1, 6, 20]); // how far an order's rows wander from its place
      for (let r = 0; r < 60; r++) {
        const ref = `R${Math.floor((r + Math.floor(random() * jitter)) / 4)}`;
        const cells = fields.map((field, i) =>
          field === 'orderRef'
            ? pick(refForms(ref))
            : field === 'businessCustomerId'
              ? pick(idForms)
              : field === 'street'
                ? pick(streetForms)
                : field === 'firstName' && random() < 0.01
                  ? 'J"an' // a quote inside an unquoted value: the scan gives up on the file
                  : field === 'productId'
                    ? String(5001 + Math.floor(random() * 3))
                    : base[i]!,
        );
        if (random() < 0.05) cells.pop(); // a short row
        lines.push(random() < 0.05 ? '' : cells.join(','));
      }
      const ending = pick(['\n', '\r\n', '\r']);
      const start = pick(['', '\ufeff', `sep=,${ending}`, ending]); // a BOM, Excel's sep= line, a blank first line
      const path = await tmp.file(`round-${round}.csv`, start + [HEADER, ...lines].join(ending) + ending);
      const options: IngestOptions = { spillThresholdBytes: 0, tmpDir: tmp.dir, streamWindowRows: pick([3, 8, 30]) };
      const source = await openOrderSource(path, options);
      const items: IngestItem[] = [];
      for await (const item of source.items()) items.push(item);
      if (!source.streamed()) {
        spilled++;
        continue;
      }
      streamed++;
      expect(byLine(items), `round ${round}`).toEqual(byLine(await readAll(path)));
    }
    expect(streamed).toBeGreaterThan(10);
    expect(spilled).toBeGreaterThan(10);
  });
});

describe('the first 10,000 rows are judged before the shape scan', () => {
  it('a mostly wrong file is refused after its first 10,000 rows, not read to its end (a NUL there goes unseen)', async () => {
    const rows = Array.from({ length: 12_000 }, (_, i) =>
      row({ orderRef: `W-${i}`, email: i % 4 === 0 ? `w${i}@example.nl` : 'no-at-sign' }),
    );
    const path = await tmp.file('mostly-wrong.csv', file(rows) + row({ street: 'Keizers\u0000gracht' }) + '\n');
    const refused = await validateFile(path, { out: join(tmp.dir, 'w.rejects.csv') }, ORDERS).then(
      () => undefined,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(refused?.code).toBe('TOO_MANY_REJECTED');
    expect(refused?.message).toMatch(/7500 of the first 10000 rows/);
    expect(await readdir(tmp.dir)).toEqual(['mostly-wrong.csv']); // no rejects file, no spill folder
  });
});

describe('the shape scan', () => {
  const plan = resolveColumns('x.csv', HEADER.split(','));
  const newScanner = (over: Partial<ConstructorParameters<typeof ShapeScanner>[0]> = {}): ShapeScanner =>
    new ShapeScanner({
      delimiter: ',',
      shape: orderShapeKey(plan)!,
      window: 10,
      maxGroupRows: 1000,
      maxOpenRows: 100,
      maxRecordBytes: 64 * 1024,
      closedBits: 2 ** 16,
      encoding: 'utf-8',
      ...over,
    });
  const scan = (
    text: string | Buffer,
    over: Partial<ConstructorParameters<typeof ShapeScanner>[0]> = {},
  ): ShapeVerdict => {
    const scanner = newScanner(over);
    // Byte by byte as well as whole: a record, a quote or a CRLF cut by a read changes nothing.
    const bytes = Buffer.from(text);
    for (const piece of bytes.length < 400 ? [...bytes].map((b) => Buffer.from([b])) : [bytes]) scanner.push(piece);
    return scanner.end();
  };

  it('gives up (the spill path) on what it does not model exactly, on invalid text and over its budgets', () => {
    const csv = (...rows: string[]) => [HEADER, ...rows].join('\n') + '\n';
    expect(scan(csv(row(), row({ orderRef: 'B' })))).toEqual({ mode: 'stream', window: 10 });
    expect(scan(csv(row({ firstName: 'J"an' })).replace('"J""an"', 'J"an'))).toMatchObject({ reason: 'unknown' });
    expect(scan(csv(row()).replace('T-1', '"T-1"x'))).toMatchObject({ why: 'text after a closing quote' });
    expect(scan(`${HEADER}\n"T-1,1001\n`)).toMatchObject({ why: 'a quoted value is never closed' });
    expect(scan(Buffer.concat([Buffer.from(csv(row())), Buffer.from([0xc3, 0x28])]))).toMatchObject({
      why: 'the text is not valid UTF-8',
    });
    expect(scan(csv(row({ street: 'x'.repeat(500) })), { maxRecordBytes: 400 })).toMatchObject({
      why: 'a record is longer than the record limit',
    });
    expect(scan(csv(...Array.from({ length: 6 }, () => row())), { maxGroupRows: 5 })).toMatchObject({
      why: 'a group has more rows than an order may have',
    });
    const interleaved = Array.from({ length: 40 }, (_, i) => row({ orderRef: `O-${i % 10}` }));
    expect(scan(csv(...interleaved), { maxOpenRows: 30 })).toMatchObject({
      why: 'too many rows of open groups at once',
    });
  });

  it('counts a quoted line break, CRLF and blank lines as the reader does (or more): the window is never shorter', () => {
    const rows = [
      row({ orderRef: 'A' }),
      row({ street: 'a\nb\nc\nd\ne', orderRef: 'X' }),
      '',
      '',
      row({ orderRef: 'A' }),
    ];
    expect(scan([HEADER, ...rows].join('\r\n') + '\r\n', { window: 4 })).toEqual({ mode: 'stream', window: 4 });
    expect(scan([HEADER, ...rows].join('\r\n') + '\r\n', { window: 3 })).toMatchObject({ reason: 'spread' });
  });

  it('marks the last keyed data row of each group, counted after the header (and a sep= line) and without blank lines', () => {
    const scanner = newScanner({ leadingRecords: 2 });
    const rows = [
      row({ orderRef: 'A' }), // keyed 0
      row({ orderRef: 'A' }), // keyed 1: A ends
      row({ orderRef: 'B' }), // keyed 2
      '',
      row({ orderRef: ' ' }), // no key: stands alone
      row({ orderRef: 'B' }), // keyed 3: B ends
      row({ orderRef: 'C' }), // keyed 4: C ends (at the end of the file)
    ];
    scanner.push(Buffer.from(['sep=,', HEADER, ...rows].join('\n') + '\n'));
    expect(scanner.end()).toEqual({ mode: 'stream', window: 10 });
    const ends = scanner.groupEnds!;
    expect([0, 1, 2, 3, 4, 5].filter((n) => ends.has(n))).toEqual([1, 3, 4]);
  });

  it('keys plain cells from their bytes as it keys any other from its text: one order whatever form its cells take', () => {
    const forms: [string, string][] = [
      ['1001', 'A'],
      ['01001', 'A'], // leading zeros, from the bytes
      [' 1001', 'A'], // a space: from the text
      ['"=""1001"""', "'A"], // quoted, Excel's =, an apostrophe: from the text
      ['"1001"', '"A"'], // quoted but plain inside: from the bytes
    ];
    const rows = forms.map(([id, ref]) =>
      row({ orderRef: 'X', businessCustomerId: 'Y' }).replace('X,Y', `${ref},${id}`),
    );
    const scanner = newScanner();
    scanner.push(Buffer.from([HEADER, ...rows, row({ orderRef: 'B' })].join('\n') + '\n'));
    expect(scanner.end()).toEqual({ mode: 'stream', window: 10 });
    const ends = scanner.groupEnds!;
    expect([0, 1, 2, 3, 4, 5].filter((n) => ends.has(n))).toEqual([4, 5]); // A ends on its fifth row, B on its one
  });

  it('keys are loose: what reads as one orderRef or customer id keys the same', () => {
    const key = orderShapeKey(plan)!;
    const at = (bcid: string, ref: string) => key.key(key.fields.map((f) => (f === 0 ? ref : bcid)));
    expect(new Set([at('1001', 'A'), at(' 01001 ', '="A"'), at('"1001"', "'A"), at('1001', ' A ')]).size).toBe(1);
    expect(at('1001', '  ')).toBeUndefined(); // an empty orderRef: the row is rejected on its own
    expect(looseCell('="0042"')).toBe('42');
  });
});

describe('StreamGroups', () => {
  it('hands a group out at its last row and a keyless unit at once, and stops when a group so closed comes back', () => {
    const groups = new StreamGroups<string>(10);
    expect(groups.add('a1', 1)).toEqual([]);
    expect(groups.addLast('b1', 2)).toEqual([['b1']]);
    expect(groups.addLast('x', undefined)).toEqual([['x']]);
    expect(groups.addLast('a2', 1)).toEqual([['a1', 'a2']]);
    expect([...groups.finish()]).toEqual([]);
    const again = new StreamGroups<string>(10);
    again.addLast('b1', 2);
    expect(() => again.add('b2', 2)).toThrow(/came back; the shape scan and the read disagree/);
  });

  it('without group ends, holds each group until the window has passed its last row', () => {
    const groups = new StreamGroups<string>(2);
    expect(groups.add('a1', 1)).toEqual([]);
    expect(groups.add('x', undefined)).toEqual([]);
    expect(groups.add('b1', 2)).toEqual([]);
    expect(groups.add('b2', 2)).toEqual([['a1']]); // 3 rows after A's last
    expect([...groups.finish()]).toEqual([['x'], ['b1', 'b2']]);
  });
});

describe('ClosedKeys', () => {
  it('never forgets a key it was given, and seldom claims one it was not', () => {
    const keys = new ClosedKeys(2 ** 27);
    for (let i = 0; i < 100_000; i++) keys.add(`1001\u0001BENCH-${i}`);
    let forgotten = 0;
    for (let i = 0; i < 100_000; i++) if (!keys.has(`1001\u0001BENCH-${i}`)) forgotten++;
    expect(forgotten).toBe(0);
    let wrong = 0;
    for (let i = 100_000; i < 200_000; i++) if (keys.has(`1001\u0001BENCH-${i}`)) wrong++;
    expect(wrong).toBeLessThan(5);
    expect(keys.bytes).toBeLessThan(100_000 * 24); // 96 bits a key, in slices of powers of two
    const small = new ClosedKeys(2 ** 20); // a cap below the keys: more false "seen", never a key forgotten
    for (let i = 0; i < 100_000; i++) small.add(`K-${i}`);
    forgotten = 0;
    for (let i = 0; i < 100_000; i++) if (!small.has(`K-${i}`)) forgotten++;
    expect(forgotten).toBe(0);
    expect(small.bytes).toBeLessThanOrEqual(2 ** 20 / 8);
  }, 120_000);
});

describe('readPlainCsvBatches', () => {
  it('gives the records readCsvBatches gives for a file of plain quoting, whatever the read size', async () => {
    const random = mulberry32(7);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const cells = [
      'a',
      '',
      ' b ',
      '"q,1"',
      '"line\r\nbreak"',
      '"two\n\nlines"',
      '"cr\ronly"',
      '"say ""hi"""',
      'é',
      '""',
    ];
    for (let round = 0; round < 40; round++) {
      const ending = pick(['\n', '\r\n', '\r']);
      const rows = Array.from({ length: 30 }, () =>
        random() < 0.1 ? '' : Array.from({ length: random() < 0.1 ? 2 : 3 }, () => pick(cells)).join(','),
      );
      const text = pick(['', 'sep=,' + ending]) + ['h1,h2,h3', ...rows].join(ending) + pick(['', ending]);
      const path = await tmp.file(`plain-${round}.csv`, text);
      const read = {
        delimiter: ',',
        chunkBytes: pick([1, 3, 7, 64, 65536]),
        ...(text.startsWith('sep=') ? { fromLine: 2 } : {}),
      };
      const all = async (batches: AsyncIterable<unknown[]>): Promise<unknown[]> => {
        const out: unknown[] = [];
        for await (const batch of batches) out.push(...batch);
        return out;
      };
      expect(await all(readPlainCsvBatches(path, read)), JSON.stringify(text)).toEqual(
        await all(readCsvBatches(path, read)),
      );
    }
  });
});

describe('readUnquotedCsvBatches', () => {
  const all = async (batches: AsyncIterable<unknown[]>): Promise<unknown[]> => {
    const out: unknown[] = [];
    for await (const batch of batches) out.push(...batch);
    return out;
  };

  it('gives the records readCsvBatches gives for a file without quotes, whatever the read size', async () => {
    const random = mulberry32(11);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const cells = ['a', '', ' b ', 'é', "it's", '=1+2', 'x\ty'];
    for (let round = 0; round < 40; round++) {
      const ending = pick(['\n', '\r\n', '\r']);
      const rows = Array.from({ length: 30 }, () =>
        random() < 0.1 ? '' : Array.from({ length: random() < 0.1 ? 2 : 3 }, () => pick(cells)).join(','),
      );
      const text = pick(['', 'sep=,' + ending]) + ['h1,h2,h3', ...rows].join(ending) + pick(['', ending]);
      const path = await tmp.file(`unquoted-${round}.csv`, text);
      const read = {
        delimiter: ',',
        chunkBytes: pick([1, 3, 7, 64, 65536]),
        ...(text.startsWith('sep=') ? { fromLine: 2 } : {}),
      };
      expect(await all(readUnquotedCsvBatches(path, read)), JSON.stringify(text)).toEqual(
        await all(readCsvBatches(path, read)),
      );
    }
  });

  it('refuses to read a quote or a record over the limit, naming its line', async () => {
    const quoted = await tmp.file('quoted.csv', 'h1,h2\na,b\nc,"d"\n');
    await expect(all(readUnquotedCsvBatches(quoted, { delimiter: ',' }))).rejects.toMatchObject({
      name: 'Error',
      line: 3,
    });
    await expect(all(readUnquotedCsvBatches(quoted, { delimiter: ',' }))).rejects.toBeInstanceOf(NotUnquotedError);
    const stray = await tmp.file('stray.csv', 'h1,h2\na,b"c\n');
    await expect(all(readUnquotedCsvBatches(stray, { delimiter: ',' }))).rejects.toBeInstanceOf(NotUnquotedError);
    const long = await tmp.file('long.csv', `h1,h2\na,${'x'.repeat(100)}\n`);
    await expect(
      all(readUnquotedCsvBatches(long, { delimiter: ',', maxRecordBytes: 50, chunkBytes: 16 })),
    ).rejects.toBeInstanceOf(NotUnquotedError);
  });
});
