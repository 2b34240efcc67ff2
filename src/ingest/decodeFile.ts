import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import iconv from 'iconv-lite';
import { FileRefusedError } from '../errors.js';
import { binaryKind, looksBinary } from './binaryKind.js';
import type { IngestEncoding } from './types.js';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Options for reading a file as text. */
export interface DecodeOptions {
  /** Default `utf-8` (invalid bytes refuse the file). */
  encoding?: IngestEncoding;
  /** Read size in bytes; default 64 KiB. */
  chunkBytes?: number;
}

/**
 * Refuses files that are not text in the chosen encoding before any parsing: gzip, ZIP, .xlsx,
 * .xls and PDF files, binary data (NUL bytes), UTF-16 "Unicode text" exports, and a UTF-8 file
 * read as windows-1252. Runs before the extension is looked at, so an .xlsx is named as one.
 * Says whether the file starts with a UTF-8 byte-order mark.
 */
export async function sniffFile(file: string, encoding: IngestEncoding): Promise<{ bom: boolean }> {
  const handle = await open(file, 'r');
  const buffer = Buffer.alloc(4096);
  let head: Buffer;
  try {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    throw new FileRefusedError(
      'ENCODING_UNSUPPORTED',
      file,
      'the file is UTF-16 ("Unicode text"). Save it as "CSV UTF-8" instead.',
    );
  }
  const binary = binaryKind(head);
  if (binary !== undefined) {
    throw new FileRefusedError(
      'FILE_NOT_TEXT',
      file,
      `this is ${binary.what}, not a CSV or JSON text file. ${binary.advice.replace('<file>', file)}`,
      { details: { kind: binary.what } },
    );
  }
  if (encoding !== 'utf-8' && head.subarray(0, 3).equals(UTF8_BOM)) {
    throw new FileRefusedError(
      'ENCODING_MISMATCH',
      file,
      `the file starts with a UTF-8 byte-order mark, so it is UTF-8, not ${encoding}. Leave out --encoding.`,
    );
  }
  // Kept so the files written for it (rejects, results) start the same way: Excel reads UTF-8 only after a BOM.
  return { bom: head.subarray(0, 3).equals(UTF8_BOM) };
}

/**
 * Streams a file as decoded text chunks. UTF-8 is checked strictly, so a windows-1252 export is
 * refused (FileRefusedError ENCODING_INVALID, naming the line) instead of silently garbled; a
 * UTF-8 byte-order mark is dropped. windows-1252 and latin1 go through iconv-lite, because
 * Node 20's own TextDecoder maps bytes 0x80-0x9F wrongly.
 */
export async function* decodeFile(file: string, options: DecodeOptions = {}): AsyncGenerator<string> {
  for await (const chunk of utf8Chunks(file, options)) yield chunk.toString('utf8');
}

/**
 * The same as decodeFile, as UTF-8 bytes cut at character boundaries: what csv-parse reads
 * fastest, since it works on bytes and would otherwise re-encode every string.
 */
export async function* utf8Chunks(file: string, options: DecodeOptions = {}): AsyncGenerator<Buffer> {
  const encoding = options.encoding ?? 'utf-8';
  const stream = createReadStream(file, { highWaterMark: options.chunkBytes ?? 64 * 1024 });
  let first = true;
  let carry: Buffer | undefined;
  const lines = new LineCounter();
  try {
    for await (const raw of stream as AsyncIterable<Buffer>) {
      let chunk = raw;
      if (first) {
        first = false;
        if (encoding === 'utf-8' && chunk.subarray(0, 3).equals(UTF8_BOM)) chunk = chunk.subarray(3);
      }
      if (encoding !== 'utf-8') {
        yield Buffer.from(iconv.decode(chunk, encoding), 'utf8');
        continue;
      }
      if (carry !== undefined) {
        chunk = Buffer.concat([carry, chunk]);
        carry = undefined;
      }
      // Keep an incomplete multi-byte character for the next read instead of calling it invalid.
      const cut = completeLength(chunk);
      if (cut < chunk.length) carry = Buffer.from(chunk.subarray(cut));
      const whole = chunk.subarray(0, cut);
      if (!isUtf8(whole)) throw invalidUtf8(file, whole, lines);
      lines.add(whole);
      if (whole.length > 0) yield whole;
    }
    if (carry !== undefined) throw invalidUtf8(file, carry, lines);
  } finally {
    stream.destroy();
  }
}

/** Length of the prefix of `buf` that ends on a UTF-8 character boundary. */
export function completeLength(buf: Buffer): number {
  for (let back = 1; back <= 3 && back <= buf.length; back++) {
    const byte = buf[buf.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: look further back
    const needed = byte >= 0xf0 ? 4 : sequenceLength(byte);
    return needed > back ? buf.length - back : buf.length;
  }
  return buf.length;
}

function invalidUtf8(file: string, buf: Buffer, lines: LineCounter): FileRefusedError {
  const offset = firstInvalidUtf8(buf);
  lines.add(buf.subarray(0, offset));
  const byte = buf[offset] ?? 0;
  if (looksBinary(buf, true)) {
    // Not windows-1252 text either: that hint would only turn binary into garbage.
    return new FileRefusedError(
      'FILE_NOT_TEXT',
      file,
      `line ${lines.line} holds binary data (byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')} among NUL or other non-text bytes), so this is not a CSV or JSON text export. Export the orders as "CSV UTF-8 (Comma delimited)" (or JSON) and use that file.`,
      { details: { line: lines.line, byte } },
    );
  }
  return new FileRefusedError(
    'ENCODING_INVALID',
    file,
    `line ${lines.line} is not valid UTF-8 (byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')}). ` +
      'The file is probably an Excel "ANSI" export: run again with --encoding windows-1252, or save it as "CSV UTF-8".',
    { details: { line: lines.line, byte } },
  );
}

/** Bytes of the UTF-8 sequence a lead byte starts (1 for ASCII and continuation bytes), 0 past 0xF4. */
function sequenceLength(byte: number): number {
  if (byte < 0xc0) return 1;
  if (byte < 0xe0) return 2;
  if (byte < 0xf0) return 3;
  return byte < 0xf5 ? 4 : 0;
}

/** Offset of the first byte that breaks UTF-8 (only called once a check has failed). */
function firstInvalidUtf8(buf: Buffer): number {
  let i = 0;
  while (i < buf.length) {
    const byte = buf[i] ?? 0;
    const length = byte >= 0x80 && byte < 0xc2 ? 0 : sequenceLength(byte);
    if (length === 0 || i + length > buf.length) return i;
    if (!isUtf8(buf.subarray(i, i + length))) return i;
    i += length;
  }
  return buf.length;
}

/** Counts physical lines the way people do: CRLF, LF and a lone CR each end one line. */
export class LineCounter {
  /** The 1-based line the next byte is on. */
  line = 1;
  private lastWasCr = false;

  add(text: Buffer | string): void {
    if (text.length === 0) return;
    // indexOf-based counting: a per-byte loop would cost more than parsing on big files.
    const lf = countOf(text, '\n');
    const cr = countOf(text, '\r');
    const crlf = cr === 0 || lf === 0 ? 0 : countOf(text, '\r\n');
    const first = typeof text === 'string' ? text.charCodeAt(0) : text[0];
    const joined = this.lastWasCr && first === 0x0a ? 1 : 0; // a CRLF split across two reads
    this.line += lf + cr - crlf - joined;
    const last = typeof text === 'string' ? text.charCodeAt(text.length - 1) : text[text.length - 1];
    this.lastWasCr = last === 0x0d;
  }
}

function countOf(text: Buffer | string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}
