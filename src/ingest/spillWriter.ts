import { readFileSync } from 'node:fs';
import { appendFile, open, type FileHandle } from 'node:fs/promises';
import { defined } from '../errors.js';

/** Options for SpillWriter. */
export interface SpillWriterOptions {
  /** Number of bucket files. */
  count: number;
  /** The path of one bucket's file. */
  path(bucket: number): string;
  /** Bytes buffered per bucket before a write is started; default 4 KiB. */
  flushBytes?: number;
  /** Bytes handed to the file system and not yet written, at most; default 1 MiB. */
  maxInFlight?: number;
  /** Bucket files kept open at most; default openHandleBudget(). */
  maxOpenFiles?: number;
}

/**
 * Writes under way at once at most: more would not go faster (libuv runs 4 file system calls at a
 * time) and, for buckets not kept open, each one holds a descriptor.
 */
const MAX_WRITES = 8;

/**
 * Descriptors left to the rest of the process (Redis and HTTP sockets, the input, the reports, worker threads)
 * when spill files are kept open.
 */
const DESCRIPTOR_HEADROOM = 256;
/** Spill files kept open where the process's descriptor limit cannot be read (a soft limit of 1,024 is common). */
const DEFAULT_OPEN_HANDLES = 256;

/**
 * How many bucket files may stay open: the process's soft limit of open files less DESCRIPTOR_HEADROOM, read from
 * /proc/self/limits (Node raises the soft limit to the hard one at start, so a 1,024-bucket file keeps every file
 * open on most Linux hosts); DEFAULT_OPEN_HANDLES where it cannot be read. Each bucket beyond it opens and closes its
 * file on every write, which made validate of a 121 MB file (1,024 buckets) spend about 6% more CPU.
 */
export function openHandleBudget(limits?: string): number {
  let text = limits;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return DEFAULT_OPEN_HANDLES;
    }
  }
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1];
  if (soft === undefined) return DEFAULT_OPEN_HANDLES;
  if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
  return Math.max(0, Number(soft) - DESCRIPTOR_HEADROOM);
}

/**
 * Appends lines to bucket files behind the caller's back (write-behind): `append` returns at
 * once unless more than `maxInFlight` bytes wait for the disk, so parsing and validating go
 * on while earlier lines are written (bounded in bytes and in writes under way). Writes to one bucket keep their order (one chain per
 * bucket). The first write error (a full disk) is kept and thrown by the next `append` or by
 * `finish`, the same error object a waited-for write would have thrown.
 *
 * Each bucket buffers its lines as UTF-8 bytes in a buffer of `flushBytes` outside the JS heap, not as strings:
 * a line waits there until its bucket's buffer is full (with 1,024 buckets, a few thousand lines later), and held
 * as a string it outlived the young generation and was promoted, to be marked and compacted as old garbage.
 */
export class SpillWriter {
  readonly #path: (bucket: number) => string;
  readonly #flushBytes: number;
  readonly #maxInFlight: number;
  /** Buckets below this keep their file open; each write to a bucket at or above it opens and closes the file. */
  readonly #keptOpen: number;
  readonly #handles: (FileHandle | undefined)[];
  /** Per bucket: the bytes buffered, how many, and its last write (never rejects: errors go to #failure). */
  readonly #buckets: { buffer: Buffer | undefined; used: number; tail: Promise<void> }[];
  /** Buffers whose write is done, for the next bucket that fills one (so a flush allocates nothing). */
  readonly #spare: Buffer[] = [];
  /** Bytes written to each bucket's file so far (once finish() resolved). */
  readonly written: number[];
  #inFlight = 0;
  readonly #writing = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  constructor(options: SpillWriterOptions) {
    const count = options.count;
    this.#path = options.path;
    this.#flushBytes = Math.max(1, options.flushBytes ?? 4 * 1024);
    this.#maxInFlight = options.maxInFlight ?? 1024 * 1024;
    this.#keptOpen = Math.min(count, options.maxOpenFiles ?? openHandleBudget());
    this.#handles = new Array<FileHandle | undefined>(count).fill(undefined);
    this.#buckets = Array.from({ length: count }, () => ({ buffer: undefined, used: 0, tail: Promise.resolve() }));
    this.written = new Array<number>(count).fill(0);
  }

  /** Buffers one line (with its newline) for a bucket; waits only while too much is in flight. */
  append(bucket: number, line: string): Promise<void> | undefined {
    const buffered = defined(this.#buckets[bucket], 'a spill bucket');
    const room = this.#flushBytes - buffered.used;
    // A UTF-8 byte per character at most three (a UTF-16 unit): the line surely fits without measuring it.
    if (line.length * 3 <= room) buffered.used += this.#bufferOf(buffered).write(line, buffered.used);
    else {
      const bytes = Buffer.byteLength(line);
      if (bytes > room) this.#flush(bucket);
      if (bytes > this.#flushBytes) this.#send(bucket, Buffer.from(line), bytes, false);
      else buffered.used += this.#bufferOf(buffered).write(line, buffered.used);
    }
    if (this.#failure !== undefined) throw this.#failure.error;
    if (this.#busy()) return this.#drain();
    return undefined;
  }

  /** Writes what is buffered, waits for every write and closes the files; throws the first write error. */
  async finish(): Promise<void> {
    for (let bucket = 0; bucket < this.#buckets.length; bucket++) {
      this.#flush(bucket);
      if (this.#busy()) await this.#drain();
    }
    await Promise.all(this.#buckets.map(({ tail }) => tail));
    await this.close();
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  /** Waits for writes under way and closes the files, ignoring errors (for dispose). */
  async close(): Promise<void> {
    await Promise.all(this.#buckets.map(({ tail }) => tail));
    await Promise.all(
      this.#handles.filter((handle) => handle !== undefined).map((handle) => handle.close().catch(() => undefined)),
    );
    this.#handles.fill(undefined);
    for (const buffered of this.#buckets) buffered.buffer = undefined;
    this.#spare.length = 0;
  }

  async #drain(): Promise<void> {
    while (this.#busy() && this.#failure === undefined) await Promise.race(this.#writing);
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  #busy(): boolean {
    return this.#inFlight > this.#maxInFlight || this.#writing.size > MAX_WRITES;
  }

  #bufferOf(buffered: { buffer: Buffer | undefined }): Buffer {
    return (buffered.buffer ??= this.#spare.pop() ?? Buffer.allocUnsafeSlow(this.#flushBytes));
  }

  #flush(bucket: number): void {
    const buffered = defined(this.#buckets[bucket], 'a spill bucket');
    if (buffered.used === 0 || buffered.buffer === undefined) return;
    const { buffer, used } = buffered;
    buffered.buffer = undefined;
    buffered.used = 0;
    this.#send(bucket, buffer, used, true);
  }

  /** Starts writing `length` bytes of `bytes` after the bucket's last write; `spare`: give the buffer back after. */
  #send(bucket: number, bytes: Buffer, length: number, spare: boolean): void {
    const buffered = defined(this.#buckets[bucket], 'a spill bucket');
    this.written[bucket] = (this.written[bucket] ?? 0) + length;
    this.#inFlight += length;
    const write = buffered.tail
      .then(() => this.#write(bucket, bytes, length))
      .then(
        () => undefined,
        (error: unknown) => {
          this.#failure ??= { error };
        },
      );
    const settled = write.then(() => {
      this.#inFlight -= length;
      this.#writing.delete(settled);
      if (spare) this.#spare.push(bytes);
    });
    this.#writing.add(settled);
    buffered.tail = settled;
  }

  async #write(bucket: number, bytes: Buffer, length: number): Promise<void> {
    if (this.#failure !== undefined) return; // the run is failing: write nothing more
    if (bucket >= this.#keptOpen) {
      await appendFile(this.#path(bucket), bytes.subarray(0, length), { mode: 0o600 });
      return;
    }
    const handle = (this.#handles[bucket] ??= await open(this.#path(bucket), 'a', 0o600));
    await handle.write(bytes, 0, length);
  }
}
