import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openOrderSource, type IngestOptions } from '../../src/ingest/openOrderSource.js';
import { FileRefusedError, type UsageError } from '../../src/errors.js';
import type { IngestItem } from '../../src/ingest/types.js';
import { errorList, HEADER, readAll, rejected, row, tempDir, valid } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const csv = (...rows: string[]): string => [HEADER, ...rows].join('\n') + '\n';
/** Forces the spill path on a small file: many buckets, temp files under tmp.dir/spill. */
const spill = (): IngestOptions => ({ spillThresholdBytes: 0, streamWindowRows: 0, bucketBytes: 64, tmpDir: tmp.dir });
/** A small file read as a large one that is grouped in one stream (the shape scan first). */
const stream = (): IngestOptions => ({ spillThresholdBytes: 0, tmpDir: tmp.dir });

/** The same items whatever their order (spilled output is ordered per bucket). */
function byLine(items: IngestItem[]): IngestItem[] {
  return [...items].sort((a, b) => (a.lines[0] ?? 0) - (b.lines[0] ?? 0));
}

describe('openOrderSource: grouping by orderRef', () => {
  const multi = csv(
    row({ orderRef: 'A', productId: '5001' }),
    row({ orderRef: 'B', firstName: 'Els', productId: '5001' }),
    row({ orderRef: 'A', productId: '5002', quantity: '3' }),
    row({ orderRef: 'C', productId: '5001' }),
    row({ orderRef: 'A', productId: '5003' }),
  );

  for (const [name, options] of [
    ['in memory', {}],
    ['spilled to temp buckets', 'spill'],
    ['grouped in one stream', 'stream'],
  ] as const) {
    it(`joins rows of one order that are not adjacent (${name})`, async () => {
      const file = await tmp.file('multi.csv', multi);
      const items = byLine(
        await readAll(file, options === 'spill' ? spill() : options === 'stream' ? stream() : options),
      );
      expect(items.map((i) => [i.kind, i.orderRef, i.lines])).toEqual([
        ['valid', 'A', [2, 4, 6]],
        ['valid', 'B', [3]],
        ['valid', 'C', [5]],
      ]);
      const a = valid(items)[0]!;
      expect(a.key).toBe('ref.1001.A');
      expect(a.payload.products).toEqual([
        { productId: 5001, quantity: 1 },
        { productId: 5002, quantity: 3 },
        { productId: 5003, quantity: 1 },
      ]);
      expect(a.rows.map((r) => r.productId)).toEqual(['5001', '5002', '5003']);
      expect(a.rowLines).toEqual([2, 4, 6]);
      expect(a.file).toBe(file);
    });
  }

  it('keeps orders of different customers with the same orderRef apart', async () => {
    const file = await tmp.file(
      'two.csv',
      csv(row({ orderRef: 'A' }), row({ orderRef: 'A', businessCustomerId: '1002', productId: '5002' })),
    );
    expect(valid(await readAll(file)).map((o) => o.key)).toEqual(['ref.1001.A', 'ref.1002.A']);
  });

  it('rejects the whole order when its rows disagree on the recipient, naming the lines', async () => {
    const file = await tmp.file(
      'mismatch.csv',
      csv(
        row({ orderRef: 'A' }),
        row({ orderRef: 'B' }),
        row({ orderRef: 'A', lastName: 'Jansen', city: 'Utrecht', productId: '5002' }),
      ),
    );
    const items = await readAll(file);
    const [a] = rejected(items);
    expect(a).toMatchObject({ orderRef: 'A', key: 'ref.1001.A', lines: [2, 4] });
    expect(a!.errors.map((e) => `${e.line}:${e.code}:${e.column}`)).toEqual([
      '4:RECIPIENT_MISMATCH:lastName',
      '4:RECIPIENT_MISMATCH:city',
    ]);
    expect(a!.errors[0]!.message).toContain('line 2');
    expect(a!.errors[0]!.message).not.toContain('Jansen');
    expect(a!.errors[1]!.message).toContain("'Utrecht' differs from 'Amsterdam'");
    expect(valid(items).map((o) => o.orderRef)).toEqual(['B']);
  });

  it('compares recipients after normalisation (spacing of a phone number is not a disagreement)', async () => {
    const file = await tmp.file(
      'norm.csv',
      csv(
        row({ orderRef: 'A' }),
        row({ orderRef: 'A', telephoneNumber: '+31 6 1234 5678', countryCode: 'nl', productId: '5002' }),
      ),
    );
    const [order] = valid(await readAll(file));
    expect(order!.notes).toEqual([
      "line 3: countryCode 'nl' -> 'NL'",
      'line 3: telephoneNumber written as E.164 (spaces and punctuation removed)',
    ]);
  });

  it('rejects a whole order when one of its rows is invalid, keeping all its rows', async () => {
    const file = await tmp.file(
      'partial.csv',
      csv(row({ orderRef: 'A' }), row({ orderRef: 'A', quantity: '1.5', productId: '5002' })),
    );
    const [order] = rejected(await readAll(file));
    expect(order!.rows).toHaveLength(2);
    expect(order!.errors.map((e) => `${e.line}:${e.code}`)).toEqual(['3:INTEGER_INVALID']);
  });

  it('rejects an order that lists a product twice under --strict-products (merges it otherwise)', async () => {
    const file = await tmp.file('dup.csv', csv(row({ orderRef: 'A' }), row({ orderRef: 'A', quantity: '2' })));
    expect(errorList(await readAll(file, { strictProducts: true }))).toEqual(['3:DUPLICATE_PRODUCT:productId']);
    expect(errorList(await readAll(file))).toEqual([]);
  });

  it('rejects an order with too many product lines', async () => {
    const rows = Array.from({ length: 4 }, (_, i) => row({ orderRef: 'A', productId: String(5001 + i) }));
    const file = await tmp.file('many.csv', csv(...rows));
    expect(errorList(await readAll(file, { maxLinesPerOrder: 3 }))).toEqual(['2:ORDER_TOO_MANY_LINES:orderRef']);
  });

  it('rejects rows with an empty orderRef in a file that has the column', async () => {
    const file = await tmp.file('empty-ref.csv', csv(row({ orderRef: 'A' }), row({ orderRef: '' })));
    expect(errorList(await readAll(file))).toEqual(['3:ORDER_REF_MISSING:orderRef']);
  });

  it('rejects the order of a row with the wrong number of cells instead of sending the rest of it', async () => {
    const broken = row({ orderRef: 'A', productId: '5002' }).replace('Keizersgracht', 'Keizersgracht,12');
    const file = await tmp.file('cells.csv', csv(row({ orderRef: 'A' }), broken, row({ orderRef: 'B' })));
    const items = byLine(await readAll(file));
    expect(items.map((i) => [i.kind, i.orderRef, i.lines])).toEqual([
      ['rejected', 'A', [2, 3]],
      ['valid', 'B', [4]],
    ]);
    expect(errorList(items)).toEqual(['3:CSV_FIELD_COUNT:']);
  });
});

describe('openOrderSource: files without orderRef', () => {
  const header = HEADER.replace('orderRef,', '');
  const plain = (over: Record<string, string> = {}): string => row(over).replace(/^[^,]*,/, '');

  it('makes each row an order keyed by payload hash and occurrence', async () => {
    const text = [header, plain(), plain({ productId: '5002' }), plain(), plain({ quantity: '0' })].join('\r\n');
    const file = await tmp.file('plain.csv', text);
    for (const options of [{}, spill(), stream()]) {
      const items = byLine(await readAll(file, options));
      const keys = items.map((i) => i.key);
      expect(keys[0]).toMatch(/^sha\.[0-9a-f]{32}\.1$/);
      expect(keys[2]).toBe(keys[0]!.replace(/\.1$/, '.2')); // identical row: second occurrence
      expect(keys[1]).toMatch(/\.1$/);
      expect(keys[3]).toBeUndefined(); // rejected, no payload to key
      expect(items.map((i) => i.kind)).toEqual(['valid', 'valid', 'valid', 'rejected']);
    }
  });

  it('gives the same keys on every import, and an overlapping file the same keys', async () => {
    const rows = [plain(), plain({ productId: '5002' }), plain()];
    const first = await tmp.file('day1.csv', [header, ...rows].join('\n'));
    const overlapping = await tmp.file('day2.csv', [header, plain({ productId: '5003' }), ...rows].join('\n'));
    const keys = async (file: string, options: IngestOptions = {}): Promise<string[]> =>
      valid(await readAll(file, options))
        .map((o) => o.key)
        .sort();
    const once = await keys(first);
    expect(await keys(first)).toEqual(once);
    expect(await keys(first, spill())).toEqual(once);
    expect(await keys(overlapping)).toEqual(expect.arrayContaining(once));
  });
});

describe('openOrderSource: memory and temp files', () => {
  it('spills big files to temp files and always removes them, also when stopped early', async () => {
    const rows = Array.from({ length: 300 }, (_, i) =>
      row({ orderRef: `R-${i % 97}`, productId: String(5001 + Math.floor(i / 97)) }),
    );
    const file = await tmp.file('big.csv', csv(...rows));
    const spillDir = join(tmp.dir, 'spill');
    await (await import('node:fs/promises')).mkdir(spillDir);
    const options: IngestOptions = {
      spillThresholdBytes: 1024,
      streamWindowRows: 0,
      bucketBytes: 4096,
      tmpDir: spillDir,
    };

    const source = await openOrderSource(file, options);
    let seenDuringRun = 0;
    for await (const item of source.items()) {
      seenDuringRun = Math.max(seenDuringRun, (await readdir(spillDir)).length);
      expect(item.kind).toBe('valid');
    }
    expect(seenDuringRun).toBe(1); // one bulkorder-ingest-* folder while reading
    expect(await readdir(spillDir)).toEqual([]);
    expect(source.stats()).toEqual({ rows: 300, records: 97, valid: 97, rejected: 0 });

    const early = await openOrderSource(file, options);
    for await (const item of early.items()) {
      void item;
      break;
    }
    expect(await readdir(spillDir)).toEqual([]);
  });

  it('refuses a file before its first item when a problem is found late, and cleans up', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => row({ orderRef: `R-${i}` }));
    const bytes = Buffer.concat([Buffer.from(csv(...rows)), Buffer.from([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x0a])]);
    const file = await tmp.file('late.csv', bytes);
    const spillDir = join(tmp.dir, 'spill');
    await (await import('node:fs/promises')).mkdir(spillDir);
    const source = await openOrderSource(file, {
      spillThresholdBytes: 0,
      tmpDir: spillDir,
      chunkBytes: 1024,
      maxRecordBytes: 1024,
    });
    const seen: IngestItem[] = [];
    const error = await (async () => {
      for await (const item of source.items()) seen.push(item);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileRefusedError);
    expect((error as FileRefusedError).code).toBe('ENCODING_INVALID');
    expect((error as FileRefusedError).message).toContain('line 202');
    expect(seen).toEqual([]);
    expect(await readdir(spillDir)).toEqual([]);
  });

  it('skips rows whose cells are all empty', async () => {
    const file = await tmp.file('blank.csv', csv(row(), ',,,,,,,,,,,,,', ' , ,,,,,,,,,,,,'));
    const source = await openOrderSource(file);
    const items: IngestItem[] = [];
    for await (const item of source.items()) items.push(item);
    expect(items).toHaveLength(1);
    expect(source.blankRows()).toBe(2);
  });
});

describe('openOrderSource: whole-file checks', () => {
  it('detects ; and tab delimiters from the header', async () => {
    const semicolon = await tmp.file('nl.csv', '\uFEFF' + csv(row()).replace(/,/g, ';').replace(/\n/g, '\r\n'));
    expect((await openOrderSource(semicolon)).delimiter).toBe(';');
    expect(valid(await readAll(semicolon))).toHaveLength(1);
    const tab = await tmp.file('t.tsv', csv(row()).replace(/,/g, '\t'));
    expect((await openOrderSource(tab)).delimiter).toBe('\t');
  });

  it('refuses missing, empty and header-less files; picks the format from the extension', async () => {
    const code = async (file: string, options: IngestOptions = {}): Promise<string> =>
      openOrderSource(file, options).then(
        () => 'opened',
        (e: unknown) => (e as FileRefusedError | UsageError).code,
      );
    expect(await code(join(tmp.dir, 'nope.csv'))).toBe('FILE_UNREADABLE');
    expect(await code(tmp.dir + '/')).toBe('FILE_UNREADABLE');
    expect(await code(await tmp.file('empty.csv', ''))).toBe('FILE_EMPTY');
    expect(await code(await tmp.file('blank.csv', '\n\r\n'))).toBe('FILE_EMPTY');
    expect(await code(await tmp.file('orders.xls', 'x'))).toBe('FORMAT_UNKNOWN');
    expect(await code(await tmp.file('orders.dat', csv(row())), { format: 'csv' })).toBe('opened');
    expect(await code(await tmp.file('x.csv', csv(row())), { delimiter: '"' })).toBe('DELIMITER_INVALID');
    expect(await code(await tmp.file('a.json', '{"a":1}'))).toBe('JSON_INVALID');
    expect(await code(await tmp.file('a.ndjson', '[{"a":1}]'))).toBe('JSON_INVALID');
    expect(await code(await tmp.file('cols.csv', 'a,b\n1,2\n'))).toBe('COLUMNS_MISSING');
  });

  it('reads a windows-1252 export when told, and refuses it otherwise', async () => {
    const text = csv(
      row({
        lastName: 'Müller',
        street: 'Mönckebergstraße',
        city: 'Köln',
        countryCode: 'DE',
        languageCode: 'de',
        telephoneNumber: '+4915123456789',
      }),
    );
    const file = await tmp.file('ansi.csv', Buffer.from(text, 'latin1'));
    const error = await openOrderSource(file).catch((e: unknown) => e);
    expect((error as FileRefusedError).code).toBe('ENCODING_INVALID');
    const [order] = valid(await readAll(file, { encoding: 'windows-1252' }));
    expect(order!.payload.recipient.address).toMatchObject({
      lastName: 'Müller',
      street: 'Mönckebergstraße',
      city: 'Köln',
    });
  });

  it('items() can be iterated once', async () => {
    const source = await openOrderSource(await tmp.file('once.csv', csv(row())));
    for await (const item of source.items()) void item;
    await expect(async () => {
      for await (const item of source.items()) void item;
    }).rejects.toThrow('only once');
  });
});
