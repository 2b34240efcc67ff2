import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeFile, LineCounter, sniffFile } from '../../src/ingest/decodeFile.js';
import { FileRefusedError } from '../../src/errors.js';
import type { IngestEncoding } from '../../src/ingest/types.js';
import { tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

async function decode(bytes: Buffer, encoding: IngestEncoding = 'utf-8', chunkBytes = 64 * 1024): Promise<string> {
  const file = await tmp.file('in.csv', bytes);
  await sniffFile(file, encoding);
  let text = '';
  for await (const chunk of decodeFile(file, { encoding, chunkBytes })) text += chunk;
  return text;
}

async function refusal(promise: Promise<unknown>): Promise<FileRefusedError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FileRefusedError);
  return error as FileRefusedError;
}

describe('decodeFile', () => {
  it('decodes UTF-8 split at every possible byte boundary', async () => {
    const text = 'Müller;Lemaître;Groß;€;𝄞 ok\n';
    for (const chunkBytes of [1, 2, 3, 5]) expect(await decode(Buffer.from(text), 'utf-8', chunkBytes)).toBe(text);
  });

  it('drops a UTF-8 byte-order mark', async () => {
    expect(await decode(Buffer.from('\uFEFFa,b\n'))).toBe('a,b\n');
  });

  it('refuses invalid UTF-8, naming the line and suggesting windows-1252', async () => {
    const bytes = Buffer.concat([Buffer.from('a,b\r\n1,2\r\n3,'), Buffer.from([0xe9]), Buffer.from('t\r\n')]);
    for (const chunkBytes of [64 * 1024, 4]) {
      const error = await refusal(decode(bytes, 'utf-8', chunkBytes));
      expect(error.code).toBe('ENCODING_INVALID');
      expect(error.message).toContain('line 3');
      expect(error.message).toContain('0xE9');
      expect(error.message).toContain('--encoding windows-1252');
    }
  });

  it('refuses a file that ends inside a multi-byte character', async () => {
    const error = await refusal(decode(Buffer.from([0x61, 0x0a, 0xc3])));
    expect(error.code).toBe('ENCODING_INVALID');
  });

  it('decodes windows-1252 bytes 0x80-0x9F as the letters Excel meant', async () => {
    // € ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ, which Node's own decoder gets wrong
    const bytes = Buffer.from([0x80, 0x8a, 0x91, 0x92, 0x93, 0x94, 0x96, 0x99, 0x9f, 0xe9, 0xfc]);
    expect(await decode(bytes, 'windows-1252')).toBe('€Š‘’“”–™Ÿéü');
  });

  it('decodes latin1 as ISO-8859-1', async () => {
    expect(await decode(Buffer.from([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72]), 'latin1')).toBe('Müller');
  });

  it('refuses UTF-16, spreadsheets and a UTF-8 file read as windows-1252', async () => {
    expect((await refusal(decode(Buffer.from([0xff, 0xfe, 0x61, 0x00])))).code).toBe('ENCODING_UNSUPPORTED');
    expect((await refusal(decode(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00])))).code).toBe('FILE_NOT_TEXT');
    expect((await refusal(decode(Buffer.from('\uFEFFa,b\n'), 'windows-1252'))).code).toBe('ENCODING_MISMATCH');
  });
});

describe('LineCounter', () => {
  it('counts CRLF, LF and CR as one line each, also across reads', () => {
    const counter = new LineCounter();
    counter.add('a\r');
    counter.add('\nb\nc\rd\r\n');
    expect(counter.line).toBe(5);
    counter.add(Buffer.from('\r\n\n'));
    expect(counter.line).toBe(7);
  });
});
