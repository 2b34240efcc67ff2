import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectDelimiter, headerLine } from '../../src/ingest/detectDelimiter.js';
import { readCsvRecords, type CsvBadRecord, type CsvRecord } from '../../src/ingest/readCsvRecords.js';
import { FileRefusedError } from '../../src/errors.js';
import { tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

async function read(
  content: string | Buffer,
  options: { delimiter?: string; chunkBytes?: number; maxRecordBytes?: number } = {},
): Promise<(CsvRecord | CsvBadRecord)[]> {
  const file = await tmp.file('in.csv', content);
  const out: (CsvRecord | CsvBadRecord)[] = [];
  for await (const record of readCsvRecords(file, { delimiter: ',', ...options })) out.push(record);
  return out;
}

const lines = (records: readonly (CsvRecord | CsvBadRecord)[]): number[] => records.map((r) => r.line);
const values = (records: readonly (CsvRecord | CsvBadRecord)[]): string[][] => records.map((r) => r.values);

describe('readCsvRecords', () => {
  for (const [name, eol] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    it(`reads ${name} line endings with the physical start line of each record`, async () => {
      const text = ['a,b', '1,2', '', `"x${eol}y",3`, '4,"5,6"', `"say ""hi""",7`].join(eol) + eol;
      for (const chunkBytes of [64 * 1024, 2]) {
        const records = await read(text, { chunkBytes });
        expect(values(records)).toEqual([
          ['a', 'b'],
          ['1', '2'],
          [`x${eol}y`, '3'],
          ['4', '5,6'],
          ['say "hi"', '7'],
        ]);
        // the blank line 3 is skipped; the quoted break makes record 4 span lines 4-5
        expect(lines(records)).toEqual([1, 2, 4, 6, 7]);
      }
    });
  }

  it('keeps line numbers right after several quoted CRLFs (csv-parse counts each twice)', async () => {
    const text = 'a,b\r\n"1\r\n2\r\n3",x\r\n"4\r\n5",y\r\nlast,z\r\n';
    expect(lines(await read(text))).toEqual([1, 2, 5, 7]);
  });

  it('reports a row with the wrong number of fields and goes on', async () => {
    const records = await read('a,b,c\n1,2,3\n4,5\n6,7,8,9\n10,11,12\n');
    expect(records.map((r) => `${r.kind}@${r.line}`)).toEqual(['record@1', 'record@2', 'bad@3', 'bad@4', 'record@5']);
    const bad = records[2] as CsvBadRecord;
    expect(bad.code).toBe('CSV_FIELD_COUNT');
    expect(bad.message).toContain('2 fields where the header has 3');
    expect(bad.values).toEqual(['4', '5']);
  });

  it('keeps a quote inside an unquoted value as written', async () => {
    expect(values(await read('a,b\n1,Jan "Jantje" Smit\n'))[1]).toEqual(['1', 'Jan "Jantje" Smit']);
  });

  it('drops a UTF-8 byte-order mark from the first header name', async () => {
    expect(values(await read('\uFEFFa,b\n1,2\n'))[0]).toEqual(['a', 'b']);
  });

  it('refuses a file whose quote is never closed, naming the last good line', async () => {
    const error = await read('a,b\n1,2\n3,"4\n5,6\n').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileRefusedError);
    expect((error as FileRefusedError).code).toBe('CSV_QUOTE_NOT_CLOSED');
    expect((error as FileRefusedError).message).toContain('after line 2');
  });

  it('refuses a record longer than the cap instead of holding it', async () => {
    const error = await read(`a,b\n1,"${'x'.repeat(5000)}"\n`, { maxRecordBytes: 1000 }).catch((e: unknown) => e);
    expect((error as FileRefusedError).code).toBe('CSV_RECORD_TOO_LARGE');
  });

  it('reads any delimiter it is given', async () => {
    expect(values(await read('a;b\n"1;2";3\n', { delimiter: ';' }))).toEqual([
      ['a', 'b'],
      ['1;2', '3'],
    ]);
    expect(values(await read('a\tb\n1\t2\n', { delimiter: '\t' }))).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });
});

describe('detectDelimiter', () => {
  it('picks the most frequent of , ; tab outside quotes', () => {
    expect(detectDelimiter('a,b,c')).toBe(',');
    expect(detectDelimiter('a;b;c')).toBe(';');
    expect(detectDelimiter('a\tb\tc')).toBe('\t');
    expect(detectDelimiter('"x,y,z";b;c')).toBe(';');
    expect(detectDelimiter('Straat, nr;Plaats;Land')).toBe(';');
    expect(detectDelimiter('single')).toBe(',');
  });

  it('finds the header line whatever the line ending, following quotes', () => {
    expect(headerLine('a,b\r\n1,2', false)).toBe('a,b');
    expect(headerLine('a,b\r1,2', false)).toBe('a,b');
    expect(headerLine('"a\nb",c\n1,2', false)).toBe('"a\nb",c');
    expect(headerLine('a,b', false)).toBeUndefined();
    expect(headerLine('a,b', true)).toBe('a,b');
  });
});
