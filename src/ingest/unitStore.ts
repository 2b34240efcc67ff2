import { createReadStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupCutter, type GroupLimit } from './groupLimit.js';
import { createSpillDir, removeSpillDir } from './spillDir.js';
import { SpillWriter } from './spillWriter.js';
import { writeFailure, type WriteFailure } from '../files/writeFailure.js';
import { defined } from '../errors.js';

/** What the store needs of a first-pass unit: its group key and rows. Units of one group are assembled together. */
export interface GroupedUnit {
  group: string;
  rows: readonly unknown[];
}

/** How a unit becomes one line of a spill file and back (orders: unitCodec.ts). */
export interface UnitCodec<U> {
  encode(unit: U): string;
  /** `group`: the unit's group key, from the spill line's prefix (a codec need not repeat it). */
  decode(line: string, group?: string): U;
}

/**
 * Holds first-pass units until every row of the file has been seen, then hands them back one
 * bucket at a time. Units with the same group key always land in the same bucket, so a bucket
 * can be assembled on its own; memory holds one bucket, not the file, and with a GroupLimit not
 * even one whole group when it is over the cap (an order of 400,000 lines).
 */
export interface UnitStore<U extends GroupedUnit> {
  /** Stores a unit; a promise only when the caller must wait (the spill writer has too much in flight). */
  add(unit: U): Promise<void> | undefined;
  /** Units encoded elsewhere (a worker thread, encodeSpill), in the order they would have been added. */
  addEncoded(units: EncodedUnits): Promise<void>;
  /** Buckets in turn; each bucket's units in the order they were added (a cut-down oversized group last). */
  buckets(): AsyncGenerator<U[]>;
  /** Removes temporary files; safe to call more than once, also after an error. */
  dispose(): Promise<void>;
}

/** Units as spill lines (with their newline) and the bucket of each; `rows` counts their rows. */
export interface EncodedUnits {
  buckets: number[];
  lines: string[];
  rows: number;
  /** Units their own errors reject (codec lines, no prefix): the caller reports them instead of spilling them. */
  settled?: string[];
}

/**
 * The spill lines of `units` for a store of `count` buckets (what `add` writes), made wherever the units are.
 * With `settle` (RecordSchema.settle), a unit it settles is set aside in `settled` and only its stand-in is spilled.
 */
export function encodeSpill<U extends GroupedUnit>(
  units: readonly U[],
  codec: UnitCodec<U>,
  count: number,
  settle?: (unit: U) => { standIn?: U } | undefined,
): EncodedUnits {
  const encoded: EncodedUnits = { buckets: [], lines: [], rows: 0 };
  for (const unit of units) {
    encoded.rows += unit.rows.length;
    const early = settle?.(unit);
    if (early !== undefined) (encoded.settled ??= []).push(codec.encode(unit));
    const spilled = early === undefined ? unit : early.standIn;
    if (spilled === undefined) continue;
    encoded.buckets.push(bucketOf(spilled.group, count));
    encoded.lines.push(spillLine(spilled.group, spilled.rows.length, codec.encode(spilled)));
  }
  return encoded;
}

/** The unit of one line encodeSpill made (with its newline). */
export function decodeSpillLine<U>(line: string, codec: UnitCodec<U>): U {
  const prefix = readPrefix(line);
  return codec.decode(line.slice(prefix.rest, -1), prefix.group);
}

/** Options for createUnitStore. */
export interface UnitStoreOptions<U> {
  /** How units are written to and read from the spill files. */
  codec: UnitCodec<U>;
  /** 1 keeps everything in memory; more spills to that many temp files. */
  bucketCount: number;
  /** Parent of the private temp folder; default the OS temp folder. */
  tmpDir?: string;
  /** Bytes buffered per bucket before a write starts; default 4 KiB (up to 1,024 buckets buffer at once: 4 MiB outside the heap, plus 1 MiB handed to the disk and not yet written). */
  flushBytes?: number;
  /** Cap on the rows of one group (orders: BULKORDER_MAX_LINES_PER_ORDER). */
  limit?: GroupLimit<U>;
  /** Spill files kept open at most (SpillWriter); default openHandleBudget(). */
  maxOpenFiles?: number;
}

/**
 * A bucket's spill file up to this many characters is read whole, ahead of its turn; a bigger one
 * (an oversized group, held back by the GroupLimit) is streamed so its text is never held whole.
 */
const READ_AHEAD_CHARS = 2 * 1024 * 1024;

/** What a spill file that cannot be written means: the temp folder (TMPDIR) is full; nothing was queued yet. */
const SPILL_FAILURE: WriteFailure = {
  code: 'SPILL_WRITE_FAILED',
  then: 'A large file is sorted through temporary spill files in the temp folder (TMPDIR): free space there or point TMPDIR at a bigger folder, and run the same command again. Nothing of this file was queued.',
};

/** A store in memory (bucketCount 1) or spilling to temp files. */
export async function createUnitStore<U extends GroupedUnit>(options: UnitStoreOptions<U>): Promise<UnitStore<U>> {
  if (options.bucketCount <= 1) return memoryStore<U>(options.codec, options.limit);
  return spillStore(options);
}

function memoryStore<U extends GroupedUnit>(codec: UnitCodec<U>, limit: GroupLimit<U> | undefined): UnitStore<U> {
  let units: U[] = [];
  return {
    add: (unit) => {
      units.push(unit);
      return undefined;
    },
    addEncoded: async (encoded) => {
      for (const line of encoded.lines) units.push(decodeSpillLine(line, codec));
    },
    buckets: async function* () {
      const all = units;
      units = [];
      if (limit === undefined) {
        yield all;
        return;
      }
      const cutter = new GroupCutter(limit);
      for (const unit of all) cutter.count(unit.group, unit.rows.length);
      if (!cutter.any) {
        yield all;
        return;
      }
      const kept = all.filter((unit) => cutter.take(unit) !== undefined);
      yield [...kept, ...cutter.finish()];
    },
    dispose: async () => {
      units = [];
    },
  };
}

/**
 * A spill line is `<rows>\t<group length>\t<group><codec line>`: the first read of a bucket
 * counts rows per group from the prefix alone, without decoding a unit.
 */
function spillLine(group: string, rows: number, encoded: string): string {
  return `${rows}\t${group.length}\t${group}${encoded}\n`;
}

function readPrefix(line: string): { rows: number; group: string; rest: number } {
  const tab1 = line.indexOf('\t');
  const tab2 = line.indexOf('\t', tab1 + 1);
  const length = Number(line.slice(tab1 + 1, tab2));
  return { rows: Number(line.slice(0, tab1)), group: line.slice(tab2 + 1, tab2 + 1 + length), rest: tab2 + 1 + length };
}

async function spillStore<U extends GroupedUnit>(options: UnitStoreOptions<U>): Promise<UnitStore<U>> {
  const { codec, bucketCount: count, limit, maxOpenFiles } = options;
  const flushBytes = options.flushBytes ?? 4 * 1024;
  const parent = options.tmpDir ?? tmpdir();
  let dir: string;
  try {
    dir = createSpillDir(parent);
  } catch (error) {
    throw writeFailure(parent, error, SPILL_FAILURE);
  }
  const path = (bucket: number): string => join(dir, `bucket-${bucket}.ndjson`);
  const writer = new SpillWriter({ count, path, flushBytes, ...(maxOpenFiles === undefined ? {} : { maxOpenFiles }) });
  // The writer throws the file system's own error; the person reads it with the folder and what to do.
  const spilled = (error: unknown): never => {
    throw writeFailure(dir, error, SPILL_FAILURE);
  };

  return {
    add: (unit) => {
      const line = spillLine(unit.group, unit.rows.length, codec.encode(unit));
      let wait: Promise<void> | undefined;
      try {
        wait = writer.append(bucketOf(unit.group, count), line);
      } catch (error) {
        return Promise.reject(writeFailure(dir, error, SPILL_FAILURE));
      }
      return wait?.catch(spilled);
    },
    addEncoded: async (encoded) => {
      for (const [i, line] of encoded.lines.entries()) {
        let wait: Promise<void> | undefined;
        try {
          wait = writer.append(defined(encoded.buckets[i], 'the bucket of an encoded line'), line);
        } catch (error) {
          spilled(error);
        }
        if (wait !== undefined) await wait.catch(spilled);
      }
    },
    buckets: async function* () {
      await writer.finish().catch(spilled);
      const filled = writer.written.flatMap((bytes, bucket) => (bytes > 0 ? [{ bucket, chars: bytes }] : []));
      // Read-ahead: the next bucket's file is read while this one is decoded and assembled.
      // A bucket too big to hold as text (an oversized group) is streamed instead, as it comes.
      const readAhead = (at: number): Promise<string> | undefined => {
        const file = filled[at];
        if (file === undefined || file.chars > READ_AHEAD_CHARS) return undefined;
        const text = readFile(path(file.bucket), 'utf8');
        text.catch(() => undefined); // awaited below; not unhandled if the caller stops early
        return text;
      };
      let next = readAhead(0);
      for (const [at, { bucket }] of filled.entries()) {
        const text = next === undefined ? undefined : await next;
        next = readAhead(at + 1);
        let cutter: GroupCutter<U> | undefined;
        if (limit !== undefined) {
          // First read: rows per group, from the prefixes only.
          const counting = new GroupCutter(limit);
          await eachLine(text, path(bucket), (line) => {
            const { rows, group } = readPrefix(line);
            counting.count(group, rows);
          });
          if (counting.any) cutter = counting;
        }
        const units: U[] = [];
        await eachLine(text, path(bucket), (line) => {
          const prefix = readPrefix(line);
          const unit = codec.decode(line.slice(prefix.rest), prefix.group);
          if (cutter === undefined || cutter.take(unit) !== undefined) units.push(unit);
        });
        if (cutter !== undefined) units.push(...cutter.finish());
        await rm(path(bucket), { force: true }); // free the disk as we go
        yield units;
      }
    },
    dispose: async () => {
      await writer.close();
      removeSpillDir(dir);
    },
  };
}

/** Calls `each` with every line of a bucket: from its text when read whole, else streamed from its file. */
async function eachLine(text: string | undefined, file: string, each: (line: string) => void): Promise<void> {
  if (text === undefined) {
    for await (const line of spillLines(file)) each(line);
    return;
  }
  let from = 0;
  for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', from)) {
    each(text.slice(from, end));
    from = end + 1;
  }
}

/** The lines of a spill file, read in pieces: the bucket's units are needed whole, its text is not. */
async function* spillLines(file: string): AsyncGenerator<string> {
  let rest = '';
  for await (const piece of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = rest + (piece as string);
    let from = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', from)) {
      yield text.slice(from, end);
      from = end + 1;
    }
    rest = text.slice(from);
  }
}

/** FNV-1a: cheap, stable across runs and processes, spreads group keys evenly. */
function bucketOf(group: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < group.length; i++) {
    hash ^= group.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}
