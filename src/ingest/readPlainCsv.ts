import { utf8Chunks } from './decodeFile.js';
import { recordMessage, type CsvBadRecord, type CsvReadOptions, type CsvRecord } from './readCsvRecords.js';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * The records of a CSV file whose quoting the shape scan found plain (ShapeScanner's `stream` verdict:
 * `"` only around whole values, `""` inside them, no record over the limit, valid text), read without
 * csv-parse: each record's bytes are decoded once and split at the delimiter, where csv-parse builds
 * every value byte by byte. The records are the ones readCsvBatches gives for such a file, to the line
 * numbers (test/ingest/streamShape.test.ts compares the items of both readers): blank lines skipped, a
 * record with another number of values than the header a CsvBadRecord (CSV_FIELD_COUNT), lines as an
 * editor counts them (CRLF, LF or CR; inside quotes too). Any other file must go through readCsvBatches.
 */
export async function* readPlainCsvBatches(
  file: string,
  options: CsvReadOptions,
): AsyncGenerator<(CsvRecord | CsvBadRecord)[]> {
  yield* readWith(new PlainCsvReader(options.delimiter, options.fromLine ?? 1), file, options);
}

/** readUnquotedCsvBatches met a record it cannot vouch for: the caller reads the file with readCsvBatches instead. */
export class NotUnquotedError extends Error {
  constructor(readonly line: number) {
    super(`line ${line}: a quote or an over-long record; read with csv-parse`);
  }
}

/**
 * readPlainCsvBatches for a file the shape scan has not passed: records without any `"` and not over
 * `maxRecordBytes` bytes read as csv-parse reads them (split at the delimiter, blank lines skipped), so
 * up to the first record that has either, whose line it throws NotUnquotedError with. For the first
 * rows judged before the scan (openRecordSource's judgeFirstRows), which then need no csv-parse.
 */
export async function* readUnquotedCsvBatches(
  file: string,
  options: CsvReadOptions,
): AsyncGenerator<(CsvRecord | CsvBadRecord)[]> {
  const reader = new PlainCsvReader(options.delimiter, options.fromLine ?? 1, options.maxRecordBytes ?? 64 * 1024);
  yield* readWith(reader, file, options);
}

/** The file's UTF-8 bytes through `reader`, its records in batches as they come. */
async function* readWith(
  reader: PlainCsvReader,
  file: string,
  options: CsvReadOptions,
): AsyncGenerator<(CsvRecord | CsvBadRecord)[]> {
  for await (const bytes of utf8Chunks(file, options)) {
    const records = reader.push(bytes, false);
    if (records.length > 0) yield records;
  }
  const records = reader.end();
  if (records.length > 0) yield records;
}

/** The tokenizer of readPlainCsvBatches, fed the file's UTF-8 bytes in pieces. */
class PlainCsvReader {
  readonly #delimiter: string;
  readonly #delimiterByte: number;
  readonly #fromLine: number;
  /** The physical line the next record starts on. */
  #line = 1;
  #carry: Buffer | undefined;
  #headerLength: number | undefined;
  #out: (CsvRecord | CsvBadRecord)[] = [];
  /** Set: no quotes, no record longer (readUnquotedCsvBatches); a record with either throws NotUnquotedError. */
  readonly #unquotedUpTo: number | undefined;

  constructor(delimiter: string, fromLine: number, unquotedUpTo?: number) {
    this.#delimiter = delimiter;
    this.#delimiterByte = Buffer.from(delimiter).readUInt8(0); // one byte (openRecordSource checks)
    this.#fromLine = fromLine;
    this.#unquotedUpTo = unquotedUpTo;
  }

  push(bytes: Buffer, final: boolean): (CsvRecord | CsvBadRecord)[] {
    let text = bytes;
    if (this.#carry !== undefined) {
      text = Buffer.concat([this.#carry, bytes]);
      this.#carry = undefined;
    }
    const used = this.#records(text, final);
    if (used < text.length) this.#carry = Buffer.from(text.subarray(used));
    const out = this.#out;
    this.#out = [];
    return out;
  }

  end(): (CsvRecord | CsvBadRecord)[] {
    const carry = this.#carry;
    this.#carry = undefined;
    return carry === undefined ? [] : this.push(carry, true);
  }

  /** Reads the whole records of `buf`; returns the bytes used. */
  #records(buf: Buffer, final: boolean): number {
    const end = buf.length;
    let p = 0;
    let lf = -1;
    let cr = -1;
    let quote = -1;
    while (p < end) {
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- a scanner's per-byte loop: p < end <= buf.length
      const first = buf[p]!;
      if (first === LF || first === CR) {
        // A blank line: no record (csv-parse's skip_empty_lines).
        if (first === CR && p + 1 >= end && !final) return p;
        p += first === CR && buf[p + 1] === LF ? 2 : 1;
        this.#line++;
        continue;
      }
      if (lf < p) lf = indexOr(buf, LF, p, end);
      if (cr < p) cr = indexOr(buf, CR, p, end);
      if (quote < p) quote = indexOr(buf, QUOTE, p, end);
      const eol = lf < cr ? lf : cr;
      if (this.#unquotedUpTo !== undefined && (quote < eol || eol - p > this.#unquotedUpTo))
        throw new NotUnquotedError(this.#line);
      if (quote >= eol) {
        // No quote before the line ends: one decode, split at the delimiter.
        if (eol === end && !final) return p;
        if (buf[eol] === CR && eol + 1 >= end && !final) return p;
        this.#record(buf.toString('utf8', p, eol).split(this.#delimiter), 0);
        p = eol === end ? end : eol + (buf[eol] === CR && buf[eol + 1] === LF ? 2 : 1);
        continue;
      }
      const next = this.#quoted(buf, p, final);
      if (next === -1) return p;
      p = next;
    }
    return end;
  }

  /** A record with quoted values from `start`; returns where the next one starts, -1 when it is not all here. */
  #quoted(buf: Buffer, start: number, final: boolean): number {
    const end = buf.length;
    const values: string[] = [];
    let breaks = 0;
    let p = start;
    for (;;) {
      if (p < end && buf[p] === QUOTE) {
        let q = p + 1;
        let doubled = false;
        for (;;) {
          q = buf.indexOf(QUOTE, q);
          if (q === -1) {
            // The scan saw every quote closed: the rest is in the next read.
            if (final)
              throw new Error('readPlainCsvBatches: a quote never closed; the file was not one the scan passed');
            return -1;
          }
          if (q + 1 < end && buf[q + 1] === QUOTE) {
            doubled = true;
            q += 2;
            continue;
          }
          if (q + 1 >= end && !final) return -1;
          break;
        }
        const value = buf.toString('utf8', p + 1, q);
        breaks += lineBreaks(value);
        values.push(doubled ? value.replaceAll('""', '"') : value);
        p = q + 1;
      } else {
        let e = p;
        while (e < end) {
          // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- a scanner's per-byte loop: e < end <= buf.length
          const c = buf[e]!;
          if (c === this.#delimiterByte || c === LF || c === CR) break;
          e++;
        }
        if (e >= end && !final) return -1;
        values.push(buf.toString('utf8', p, e));
        p = e;
      }
      if (p < end && buf[p] === this.#delimiterByte) {
        p++;
        continue;
      }
      break;
    }
    if (p < end) {
      if (buf[p] === CR && p + 1 >= end && !final) return -1;
      p += buf[p] === CR && buf[p + 1] === LF ? 2 : 1;
    }
    this.#record(values, breaks);
    return p;
  }

  /** One record read, `breaks` line breaks inside its quoted values. */
  #record(values: string[], breaks: number): void {
    const line = this.#line;
    this.#line += 1 + breaks;
    if (line < this.#fromLine) return; // csv-parse's from_line: the lines before the header (Excel's sep=)
    this.#headerLength ??= values.length;
    if (values.length === this.#headerLength) {
      this.#out.push({ kind: 'record', line, values });
      return;
    }
    this.#out.push({
      kind: 'bad',
      line,
      code: 'CSV_FIELD_COUNT',
      message: recordMessage('CSV_FIELD_COUNT', values.length, this.#headerLength),
      values,
    });
  }
}

/** Line breaks in a value as an editor counts them: CRLF, LF and a lone CR each one. */
function lineBreaks(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === LF) n++;
    else if (c === CR && value.charCodeAt(i + 1) !== LF) n++;
  }
  return n;
}

/** buf.indexOf(byte, from), or `end` when there is none. */
function indexOr(buf: Buffer, byte: number, from: number, end: number): number {
  const at = buf.indexOf(byte, from);
  return at === -1 ? end : at;
}
