import { isUtf8 } from 'node:buffer';
import { ClosedKeys, finishHashes, HASH_SEEDS, hashStep1, hashStep2, keyHashes, shapeHash } from './closedKeys.js';
import { completeLength } from './decodeFile.js';
import { GroupEnds } from './streamGroups.js';

/**
 * How the rows of a record kind group, read from a CSV record's cells before any check. The key must
 * be coarser than the real grouping: two rows the checks put in one group (one order) always get the
 * same key, while rows of different groups may share one (then they are held open together, which
 * costs memory, never correctness). Undefined: the row stands alone whatever it holds.
 */
export interface ShapeKey {
  /** Column indexes the key reads, ascending. */
  readonly fields: readonly number[];
  /** The key from the cells at `fields` (in that order; a missing cell is undefined). */
  key(cells: readonly (string | undefined)[]): string | undefined;
  /**
   * Set when `key` is `${looseCell(cells[first])}\u0001${looseCell(cells[second])}`, undefined when cells[second] is
   * missing or blank: the scan then hashes the bytes of plain cells (looseCell's own test) without making text.
   */
  readonly pair?: { readonly first: number; readonly second: number };
}

/**
 * Whether a file can be grouped in one stream: `stream` when every group's rows lie within the
 * window of each other, so a group not seen for `window` rows never comes back; `spill` when a closed
 * group came back (`spread`, at that row) or the scan could not tell (`unknown`: unusual quoting, an
 * over-long record, invalid text, a group or the open window over its budget). A `spread` file is
 * still tokenized to its end: `plain` says whether its quoting and text were what the stream
 * verdict needs of them too (readPlainCsvBatches may read it), with the groups no longer followed.
 */
export type ShapeVerdict =
  | { mode: 'stream'; window: number }
  | { mode: 'spill'; reason: 'spread'; row: number; plain: boolean }
  | { mode: 'spill'; reason: 'unknown'; why: string };

/** What the scan of a file's shape needs to know. */
export interface ShapeScanOptions {
  delimiter: string;
  shape: ShapeKey;
  /** Rows after which a group not seen again is closed (the stream's window). */
  window: number;
  /** Most rows one group may have in the stream (more: the spill path caps it, as ORDER_TOO_MANY_LINES). */
  maxGroupRows: number;
  /** Most rows held in open groups at once (memory of the stream). */
  maxOpenRows: number;
  /** Records longer than this many bytes leave it to the spill path (which refuses the file, or not). */
  maxRecordBytes: number;
  /** Most bits remembering closed groups; see ClosedKeys. */
  closedBits: number;
  /** `utf-8` checks the text as it goes; other encodings are read byte by byte (latin1, C1 controls as one). */
  encoding: 'utf-8' | 'windows-1252' | 'latin1';
  /**
   * Records before the first data row, blank lines not counted: the header, and an Excel `sep=` line before it
   * (2); default 1. GroupEnds counts the keyed rows after them, as the reader meets them.
   */
  leadingRecords?: number;
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** Thrown inside the scanner to stop tokenizing once the verdict is made (caught there, never seen outside). */
class Verdict extends Error {
  constructor(readonly verdict: ShapeVerdict) {
    super(verdict.mode);
  }
}

/** The verdict that the file's shape is unknown (spill it), and why: thrown on rare paths only. */
function unknownShape(why: string): Verdict {
  return new Verdict({ mode: 'spill', reason: 'unknown', why });
}

/**
 * A quote with no closing quote in the buffer: the record starting at `start` waits for the next read,
 * or, in the last bytes, the value is never closed.
 */
function unclosedQuote(start: number, final: boolean): number {
  if (!final) return start;
  throw unknownShape('a quoted value is never closed');
}

/**
 * The first read of a large CSV file, on its bytes: splits records and the few cells the shape key
 * needs (csv-parse's rules as bulkorder uses them: `"` quotes, `""` inside quotes, CR, LF or CRLF),
 * and follows the groups through a window of rows, remembering closed ones in a fixed number of bits.
 * Anything it does not model exactly (a quote inside an unquoted cell, text after a closing quote)
 * gives up to the spill path, so a `stream` verdict is never wrong. Rows are counted as records,
 * header, blank and empty lines included: never fewer than the reader counts, so a group the reader
 * closes was closed here too.
 */
export class ShapeScanner {
  readonly #options: ShapeScanOptions;
  readonly #delimiter: number;
  /** By column: where its cell goes in #ranges (2 per key cell), -1 for a column the key does not read. */
  readonly #slot: Int32Array;
  readonly #lastField: number;
  readonly #cells: (string | undefined)[];
  /** Where each key cell of the record lies in the buffer: [start, end) per slot, -1 for a missing cell. */
  readonly #ranges: Int32Array;
  readonly #closed: ClosedKeys;
  /** `end`: the group's last keyed data row so far (GroupEnds' count), -1 for none (the header's key). */
  readonly #open = new Map<number, { last: number; rows: number; h1: number; h2: number; end: number }>();
  readonly #ends = new GroupEnds();
  /** Keyed data rows so far (GroupEnds' count); #leading: records still to pass before the first data row. */
  #keyed = 0;
  #leading: number;
  /** shapeHash of each row's key in the window, -1 for none. */
  readonly #ringKeys: Float64Array;
  readonly #ringRows: Int32Array;
  #ringHead = 0;
  #ringSize = 0;
  #openRows = 0;
  #row = 0;
  #carry: Buffer | undefined;
  #utf8Carry: Buffer | undefined;
  #first = true;
  #verdict: ShapeVerdict | undefined;
  /** The row a closed group came back at: from then on only the file's quoting and text are checked. */
  #spreadRow: number | undefined;

  constructor(options: ShapeScanOptions) {
    this.#options = options;
    this.#leading = options.leadingRecords ?? 1;
    if (Buffer.byteLength(options.delimiter) !== 1) throw new Error('ShapeScanner: a one-byte delimiter only');
    this.#delimiter = Buffer.from(options.delimiter).readUInt8(0);
    this.#lastField = Math.max(...options.shape.fields);
    this.#slot = new Int32Array(this.#lastField + 1).fill(-1);
    options.shape.fields.forEach((field, slot) => (this.#slot[field] = 2 * slot));
    this.#cells = new Array<string | undefined>(options.shape.fields.length);
    this.#ranges = new Int32Array(2 * options.shape.fields.length);
    this.#closed = new ClosedKeys(options.closedBits);
    this.#ringKeys = new Float64Array(options.window + 2).fill(-1);
    this.#ringRows = new Int32Array(options.window + 2);
    if (this.#delimiter === QUOTE || this.#delimiter === CR || this.#delimiter === LF)
      this.#verdict = { mode: 'spill', reason: 'unknown', why: 'the delimiter is a quote or a line break' };
  }

  /** True once the verdict is made (the rest of the file need not be tokenized). */
  get decided(): boolean {
    return this.#verdict !== undefined;
  }

  /** The file's next bytes, in order. */
  push(chunk: Buffer): void {
    if (this.#verdict !== undefined) return;
    let bytes = chunk;
    if (this.#first) {
      this.#first = false;
      if (this.#options.encoding === 'utf-8' && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
        bytes = bytes.subarray(3);
    }
    try {
      if (this.#options.encoding === 'utf-8') this.#checkUtf8(bytes);
      let text = bytes;
      if (this.#carry !== undefined) {
        // The record cut by the last read, finished on its own first when this read's first line break ends it
        // (no quote in the way), so the whole read is not copied for it.
        const eol = bytes.indexOf(LF);
        const head = eol === -1 ? -1 : eol + 1;
        const whole = head !== -1 && !this.#carry.includes(QUOTE) && bytes.subarray(0, head).indexOf(QUOTE) === -1;
        if (whole) {
          const record = Buffer.concat([this.#carry, bytes.subarray(0, head)]);
          if (this.#records(record, false) !== record.length) throw new Error('ShapeScanner: a record was not whole');
          text = bytes.subarray(head);
        } else text = Buffer.concat([this.#carry, bytes]);
      }
      const used = this.#records(text, false);
      this.#carry = used === text.length ? undefined : Buffer.from(text.subarray(used));
      if (this.#carry !== undefined && this.#carry.length > this.#options.maxRecordBytes)
        throw unknownShape('a record is longer than the record limit');
    } catch (error) {
      if (!(error instanceof Verdict)) throw error;
      this.#verdict = this.#spreadRow === undefined ? error.verdict : this.#spread(false);
      this.#carry = undefined;
    }
  }

  #spread(plain: boolean): ShapeVerdict {
    return { mode: 'spill', reason: 'spread', row: this.#spreadRow ?? 0, plain };
  }

  /** The verdict, after the last bytes. */
  end(): ShapeVerdict {
    if (this.#verdict !== undefined) return this.#verdict;
    try {
      if (this.#utf8Carry !== undefined) throw unknownShape('the text ends inside a character');
      if (this.#carry !== undefined) this.#records(this.#carry, true);
    } catch (error) {
      if (!(error instanceof Verdict)) throw error;
      return (this.#verdict = this.#spreadRow === undefined ? error.verdict : this.#spread(false));
    }
    if (this.#spreadRow !== undefined) return (this.#verdict = this.#spread(true));
    for (const group of this.#open.values()) if (group.end >= 0) this.#ends.add(group.end);
    return (this.#verdict = { mode: 'stream', window: this.#options.window });
  }

  /** After a `stream` verdict: which keyed data rows end their group (StreamGroups hands each group out there). */
  get groupEnds(): GroupEnds | undefined {
    return this.#verdict?.mode === 'stream' ? this.#ends : undefined;
  }

  #checkUtf8(bytes: Buffer): void {
    let text = this.#utf8Carry === undefined ? bytes : Buffer.concat([this.#utf8Carry, bytes]);
    this.#utf8Carry = undefined;
    const cut = completeLength(text);
    if (cut < text.length) {
      this.#utf8Carry = Buffer.from(text.subarray(cut));
      text = text.subarray(0, cut);
    }
    if (!isUtf8(text)) throw unknownShape('the text is not valid UTF-8');
  }

  /** Tokenizes whole records of `buf`; returns the bytes used (the rest is an incomplete record). */
  #records(buf: Buffer, final: boolean): number {
    const end = buf.length;
    const delimiter = this.#delimiter;
    const slot = this.#slot;
    const ranges = this.#ranges;
    const maxRecord = this.#options.maxRecordBytes;
    let p = 0;
    // The next line break and quote at or after p (end: none in this buffer), found with indexOf.
    let lf = -1;
    let cr = -1;
    let quote = -1;
    while (p < end) {
      const start = p;
      let field = 0;
      ranges.fill(-1);
      for (;;) {
        if (field > this.#lastField) {
          // Past the key's cells: jump to the record's end unless a quote comes first.
          if (lf < p) lf = indexOr(buf, LF, p, end);
          if (cr < p) cr = indexOr(buf, CR, p, end);
          if (quote < p) quote = indexOr(buf, QUOTE, p, end);
          const eol = lf < cr ? lf : cr;
          if (quote >= eol) {
            if (eol === end && !final) return start;
            p = eol;
            break;
          }
        }
        let cellEnd: number;
        let cellStart: number;
        if (p < end && buf[p] === QUOTE) {
          let q = p + 1;
          for (;;) {
            q = buf.indexOf(QUOTE, q);
            if (q === -1) return unclosedQuote(start, final);
            if (q + 1 < end && buf[q + 1] === QUOTE) {
              q += 2; // "" inside quotes; the key drops quotes, so no need to undo the doubling
              continue;
            }
            if (q + 1 >= end && !final) return start;
            break;
          }
          cellStart = p + 1;
          cellEnd = q;
          p = q + 1;
          if (p < end) {
            const c = buf[p];
            if (c !== delimiter && c !== CR && c !== LF) throw unknownShape('text after a closing quote');
          }
        } else {
          cellStart = p;
          while (p < end) {
            // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- a scanner's per-byte loop: p < end <= buf.length
            const c = buf[p]!;
            if (c === delimiter || c === LF || c === CR) break;
            if (c === QUOTE) throw unknownShape('a quote inside an unquoted value');
            p++;
          }
          if (p >= end && !final) return start;
          cellEnd = p;
        }
        // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- field <= #lastField, and #slot has #lastField + 1 entries
        const at = field <= this.#lastField ? slot[field]! : -1; // the cell's place in #ranges, -1: not a key cell
        if (at !== -1) setRange(ranges, at, cellStart, cellEnd);
        if (p < end && buf[p] === delimiter) {
          p++;
          field++;
          continue;
        }
        break;
      }
      // p is at a line break or the end.
      if (p < end) {
        if (buf[p] === CR && p + 1 < end && buf[p + 1] === LF) p += 2;
        else if (buf[p] === CR && p + 1 >= end && !final)
          return start; // a CRLF cut by the read
        else p++;
      }
      if (p - start > maxRecord) throw unknownShape('a record is longer than the record limit');
      this.#record(buf, buf[start] === LF || buf[start] === CR);
    }
    return p;
  }

  #text(buf: Buffer, from: number, to: number): string {
    if (this.#options.encoding === 'utf-8') return buf.toString('utf8', from, to);
    // Bytes 0x80-0x9F are five undefined characters in windows-1252: counted as one, so equal text stays equal.
    return buf.toString('latin1', from, to).replace(/[\u0080-\u009f]/g, '\u0080');
  }

  /**
   * The record's key as shapeHash gives it (-1: none), with its two hashes left in `pair`: from the bytes of
   * plain cells when the key is a pair of them, else from the key's text.
   */
  #key(buf: Buffer): number {
    const pair = this.#options.shape.pair;
    const ranges = this.#ranges;
    if (pair !== undefined) {
      const hashed = pairHashes(buf, ranges, pair.first, pair.second);
      if (hashed !== NOT_PLAIN) return hashed;
    }
    const cells = this.#cells;
    for (let i = 0; i < cells.length; i++) {
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- #ranges has two entries per cell
      const from = ranges[2 * i]!;
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- as above
      cells[i] = from === -1 ? undefined : this.#text(buf, from, ranges[2 * i + 1]!);
    }
    const key = this.#options.shape.key(cells);
    if (key === undefined) return -1;
    const [h1, h2] = keyHashes(key);
    hashPair[0] = h1;
    hashPair[1] = h2;
    return shapeHash(h1, h2);
  }

  /** One record's key through the window; `blank`: an empty line (the reader skips it). */
  #record(buf: Buffer, blank: boolean): void {
    const row = this.#row++;
    if (this.#spreadRow !== undefined) return;
    const { window } = this.#options;
    // Close the groups last seen more than `window` rows ago.
    while (this.#ringSize > 0) {
      const at = this.#ringHead;
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- #ringHead stays below the ring's length
      const last = this.#ringRows[at]!;
      if (row - last <= window) break;
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- as above
      const key = this.#ringKeys[at]!;
      this.#ringKeys[at] = -1;
      this.#ringHead = (at + 1) % this.#ringKeys.length;
      this.#ringSize--;
      if (key === -1) continue;
      const group = this.#open.get(key);
      if (group !== undefined && group.last === last) {
        this.#open.delete(key);
        this.#openRows -= group.rows;
        this.#closed.addHashes(group.h1, group.h2);
        if (group.end >= 0) this.#ends.add(group.end);
      }
    }
    const key = this.#key(buf);
    let end = -1;
    if (!blank && this.#leading > 0) this.#leading--;
    else if (key !== -1) end = this.#keyed++;
    if (key !== -1) {
      let group = this.#open.get(key);
      if (group === undefined) {
        const h1 = hashPair[0];
        const h2 = hashPair[1];
        if (this.#closed.hasHashes(h1, h2)) {
          // Spread: the groups no longer matter, the quoting still does (a plain file skips csv-parse).
          this.#spreadRow = row;
          this.#open.clear();
          this.#ringKeys.fill(-1);
          return;
        }
        group = { last: row, rows: 0, h1, h2, end };
        this.#open.set(key, group);
      }
      if (end >= 0) group.end = end;
      group.last = row;
      group.rows++;
      this.#openRows++;
      if (group.rows > this.#options.maxGroupRows) throw unknownShape('a group has more rows than an order may have');
      if (this.#openRows > this.#options.maxOpenRows) throw unknownShape('too many rows of open groups at once');
    }
    const at = (this.#ringHead + this.#ringSize) % this.#ringKeys.length;
    this.#ringKeys[at] = key;
    this.#ringRows[at] = row;
    this.#ringSize++;
  }
}

/** A key cell's bytes [from, to) at `at` of #ranges. */
function setRange(ranges: Int32Array, at: number, from: number, to: number): void {
  ranges[at] = from;
  ranges[at + 1] = to;
}

/** The two hashes of the last key #key made (read before the next). */
const hashPair: [number, number] = [0, 0];
const NOT_PLAIN = -2;

/**
 * keyHashes of `${looseCell(a)}\u0001${looseCell(b)}` from the bytes of cells `a` and `b` when both are plain as
 * looseCell sees it (printable ASCII but space , ' " =; its leading zeros dropped), left in hashPair; shapeHash of
 * them, -1 when b is missing or empty (no key), NOT_PLAIN when a cell is not plain (the caller makes the text).
 */
function pairHashes(buf: Buffer, ranges: Int32Array, a: number, b: number): number {
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- two entries per cell
  const bFrom = ranges[2 * b]!;
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- as above
  const bTo = ranges[2 * b + 1]!;
  if (bFrom === -1 || bFrom === bTo) return -1; // no orderRef: the row stands alone
  let h1: number = HASH_SEEDS[0];
  let h2: number = HASH_SEEDS[1];
  for (let cell = 0; cell < 2; cell++) {
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- as above
    let from = cell === 0 ? ranges[2 * a]! : bFrom;
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- as above
    const to = cell === 0 ? ranges[2 * a + 1]! : bTo;
    if (from === -1) return NOT_PLAIN; // a missing first cell: the text path decides
    if (cell === 1) {
      h1 = hashStep1(h1, 1);
      h2 = hashStep2(h2, 1);
    }
    for (let i = from; i < to; i++) {
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- i < to <= buf.length
      const c = buf[i]!;
      if (c <= 32 || c > 126 || c === 44 || c === 39 || c === 34 || c === 61) return NOT_PLAIN;
    }
    while (from < to && buf[from] === 0x30) from++; // looseCell drops leading zeros
    for (let i = from; i < to; i++) {
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- i < to <= buf.length
      const c = buf[i]!;
      h1 = hashStep1(h1, c);
      h2 = hashStep2(h2, c);
    }
  }
  finishHashes(h1, h2, hashPair);
  return shapeHash(hashPair[0], hashPair[1]);
}

/** buf.indexOf(byte, from), or `end` when there is none. */
function indexOr(buf: Buffer, byte: number, from: number, end: number): number {
  const at = buf.indexOf(byte, from);
  return at === -1 ? end : at;
}
