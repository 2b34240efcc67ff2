import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJsonArray, readNdjson, type JsonOversize, type JsonRecord } from '../../src/ingest/readJsonRecords.js';
import { FileRefusedError } from '../../src/errors.js';
import { tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

async function array(
  text: string,
  chunkBytes = 64 * 1024,
  maxRecordBytes?: number,
): Promise<(JsonRecord | JsonOversize)[]> {
  const file = await tmp.file('in.json', text);
  const out: (JsonRecord | JsonOversize)[] = [];
  for await (const record of readJsonArray(file, {
    chunkBytes,
    ...(maxRecordBytes === undefined ? {} : { maxRecordBytes }),
  }))
    out.push(record);
  return out;
}

async function ndjson(
  text: string,
  chunkBytes = 64 * 1024,
  maxRecordBytes?: number,
): Promise<(JsonRecord | JsonOversize)[]> {
  const file = await tmp.file('in.ndjson', text);
  const out: (JsonRecord | JsonOversize)[] = [];
  for await (const record of readNdjson(file, {
    chunkBytes,
    ...(maxRecordBytes === undefined ? {} : { maxRecordBytes }),
  }))
    out.push(record);
  return out;
}

describe('readJsonArray', () => {
  const text = '[\r\n  {"a": "x]}\\"[{", "b": [1, {"c": 2}]},\n  {"d": "Müller"}, 12 ,"s",\n  {\n"e": null}\n]\n';

  it('splits a top-level array into elements with their start lines, whatever the read size', async () => {
    for (const chunkBytes of [64 * 1024, 1, 3, 7]) {
      const records = await array(text, chunkBytes);
      expect(records.map((r) => r.line)).toEqual([2, 3, 3, 3, 4]);
      expect(records.map((r) => (r.kind === 'element' ? JSON.parse(r.text) : r.kind))).toEqual([
        { a: 'x]}"[{', b: [1, { c: 2 }] },
        { d: 'Müller' },
        12,
        's',
        { e: null },
      ]);
    }
  });

  it('reads an empty array', async () => {
    expect(await array(' [ ] ')).toEqual([]);
  });

  it('reports an over-long element without keeping it, and goes on', async () => {
    const records = await array(`[{"a":"${'x'.repeat(200)}"},{"b":1}]`, 16, 100);
    expect(records).toEqual([
      { kind: 'oversize', line: 1 },
      { kind: 'element', line: 1, text: '{"b":1}' },
    ]);
  });

  for (const [why, bad, code] of [
    ['a single object', '{"a":1}', 'one JSON object'],
    ['a missing comma', '[{"a":1} {"b":2}]', 'expected "," or "]"'],
    ['a trailing comma', '[{"a":1},]', 'trailing commas'],
    ['a truncated file', '[{"a":1},{"b":', 'ends before the closing'],
    ['content after the array', '[{"a":1}] x', 'after the closing'],
  ] as const) {
    it(`refuses ${why}`, async () => {
      const error = await array(bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileRefusedError);
      expect((error as FileRefusedError).code).toBe('JSON_INVALID');
      expect((error as FileRefusedError).message).toContain(code);
    });
  }
});

describe('readNdjson', () => {
  it('yields each non-blank line with its line number, for LF, CRLF and CR, across reads', async () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      for (const chunkBytes of [64 * 1024, 1, 4]) {
        const records = await ndjson(['{"a":1}', '', '  ', '{"b":"ü"}', '{bad'].join(eol) + eol, chunkBytes);
        expect(records, JSON.stringify({ eol, chunkBytes })).toEqual([
          { kind: 'element', line: 1, text: '{"a":1}' },
          { kind: 'element', line: 4, text: '{"b":"ü"}' },
          { kind: 'element', line: 5, text: '{bad' },
        ]);
      }
    }
  });

  it('reads a last line without a line ending, and reports over-long lines', async () => {
    expect(await ndjson(`{"a":"${'x'.repeat(50)}"}\n{"b":2}`, 8, 20)).toEqual([
      { kind: 'oversize', line: 1 },
      { kind: 'element', line: 2, text: '{"b":2}' },
    ]);
  });
});
