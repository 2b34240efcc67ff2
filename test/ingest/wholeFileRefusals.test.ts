import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileRefusedError } from '../../src/errors.js';
import { checkScheduleSource } from '../../src/schedule/resolveSource.js';
import { HEADER, readAll, row, runCli, tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const refusal = (file: string, options = {}): Promise<FileRefusedError> =>
  readAll(file, options).then(
    () => {
      throw new Error(`${file} was not refused`);
    },
    (e: unknown) => e as FileRefusedError,
  );

/** A minimal .xlsx start: a ZIP whose first entry is [Content_Types].xml, as Excel writes it. */
function xlsxHead(): Buffer {
  const name = Buffer.from('[Content_Types].xml');
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, name, Buffer.from('<?xml version="1.0"?><Types/>')]);
}

describe('files refused as a whole, with the right words', () => {
  it('a header-only CSV, [] and an empty NDJSON have no orders: refused unless --allow-empty', async () => {
    for (const [name, text] of [
      ['header.csv', HEADER + '\n'],
      ['blank-rows.csv', HEADER + '\n,,,,,,,,,,,,,\n'],
      ['empty.json', '[]\n'],
      ['spaces.json', '  [ ]  '],
    ] as const) {
      const file = await tmp.file(name, text);
      const error = await refusal(file);
      expect(error.code, name).toBe('FILE_EMPTY');
      expect(error.exitCode).toBe(3);
      expect(error.message).toContain('the file has no orders');
      expect(await readAll(file, { allowEmpty: true }), name).toEqual([]);
    }
  });

  it('the CLI exits 3 for an empty export and 0 with --allow-empty', { timeout: 90_000 }, async () => {
    const file = await tmp.file('nightly.csv', HEADER + '\n');
    const refused = await runCli(['validate', file]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('the file has no orders');
    const allowed = await runCli(['validate', file, '--allow-empty']);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/orders\s+0/);
  });

  it('names binary files for what they are, whatever their extension, and says what to export instead', async () => {
    const cases: [string, Buffer, RegExp][] = [
      ['orders.csv', gzipSync(Buffer.from(HEADER + '\n' + row() + '\n')), /gzip-compressed file.*gunzip/],
      ['orders.xlsx', xlsxHead(), /Excel workbook \(\.xlsx\).*CSV UTF-8/],
      ['orders.zip', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 0x41, 0x42]), /ZIP archive/],
      ['orders.csv', Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n', 'latin1'), /PDF document/],
      ['orders.json', Buffer.concat([Buffer.from('[{"a"'), Buffer.alloc(64, 0), Buffer.from('}]')]), /binary data/],
    ];
    for (const [name, bytes, words] of cases) {
      const file = await tmp.file(`${words.source.length}-${name}`, bytes);
      for (const encoding of ['utf-8', 'windows-1252'] as const) {
        const error = await refusal(file, { encoding });
        expect(error.code, `${name} ${encoding}`).toBe('FILE_NOT_TEXT');
        expect(error.message, name).toMatch(words);
        expect(error.message, name).not.toContain('windows-1252');
      }
    }
  });

  it('binary data after a text start is binary, not a windows-1252 export; a real ANSI export still gets the hint', async () => {
    const binaryTail = await tmp.file(
      'tail.csv',
      Buffer.concat([
        Buffer.from(HEADER + '\n' + row() + '\n'.repeat(1)),
        Buffer.from('x'.repeat(5000)),
        Buffer.from([0x81, 0x00, 0x00, 0x9d, 0x01, 0x02, 0x03, 0xff, 0x00]),
      ]),
    );
    const binary = await refusal(binaryTail);
    expect(binary.code).toBe('FILE_NOT_TEXT');
    expect(binary.message).not.toContain('windows-1252');
    const ansi = await tmp.file('ansi.csv', Buffer.from(HEADER + '\n' + row({ lastName: 'Müller' }) + '\n', 'latin1'));
    const hint = await refusal(ansi);
    expect(hint.code).toBe('ENCODING_INVALID');
    expect(hint.message).toContain('--encoding windows-1252');
  });

  it('a CLI run on an .xlsx exits 3 naming it, instead of "cannot tell the format"', { timeout: 90_000 }, async () => {
    const file = await tmp.file('orders.xlsx', xlsxHead());
    const { code, stderr } = await runCli(['validate', file]);
    expect(code).toBe(3);
    expect(stderr).toContain('Excel workbook');
    expect(stderr).not.toContain('cannot tell the format');
  });

  it(
    'a schedule source that cannot exist is a usage error; a file not exported yet in an existing folder is fine',
    { timeout: 90_000 },
    async () => {
      await expect(checkScheduleSource('/nonexistent')).rejects.toMatchObject({
        code: 'SOURCE_NOT_FOUND',
        exitCode: 2,
      });
      await expect(checkScheduleSource('/nonexistent/orders-*.csv')).rejects.toMatchObject({
        code: 'SOURCE_NOT_FOUND',
        exitCode: 2,
      });
      await expect(checkScheduleSource('/nonexistent/tonight.csv')).rejects.toMatchObject({ code: 'SOURCE_NOT_FOUND' });
      await expect(checkScheduleSource(join(tmp.dir, 'tonight.csv'))).resolves.toBeUndefined();
      await expect(checkScheduleSource(join(tmp.dir, 'orders-*.csv'))).resolves.toBeUndefined();
      await expect(checkScheduleSource(tmp.dir)).resolves.toBeUndefined();
      const { code, stderr } = await runCli([
        'schedule',
        'set',
        'nightly',
        '--cron',
        '0 2 * * *',
        '--source',
        '/nonexistent',
      ]);
      expect(code).toBe(2);
      expect(stderr).toContain('/nonexistent');
    },
  );
});
