import { readFileSync } from 'node:fs';
import { appendFile, open, type FileHandle } from 'node:fs/promises';
import { defined } from '../errors.js';

/** Options for SpillWriter. */
export interface SpillWriterOptions {
  /** Number of bucket files. */
  count: number;
  /** The path of one bucket's file. */
  path(bucket: number): string;
  /** Characters buffered per bucket before a write is started; default 4 Ki. */
  flushBytes?: number;
  /** Characters handed to the file system and not yet written, at most; default 1 Mi. */
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
 * once unless more than `maxInFlight` characters wait for the disk, so parsing and validating go
 * on while earlier lines are written (bounded in characters and in writes under way). Writes to one bucket keep their order (one chain per
 * bucket). The first write error (a full disk) is kept and thrown by the next `append` or by
 * `finish`, the same error object a waited-for write would have thrown.
 */
export class SpillWriter {
  readonly #path: (bucket: number) => string;
  readonly #flushBytes: number;
  readonly #maxInFlight: number;
  /** Buckets below this keep their file open; each write to a bucket at or above it opens and closes the file. */
  readonly #keptOpen: number;
  readonly #handles: (FileHandle | undefined)[];
  /** Per bucket: the lines buffered, their characters, and its last write (never rejects: errors go to #failure). */
  readonly #buckets: { pending: string[]; pendingBytes: number; tail: Promise<void> }[];
  /** Characters written to each bucket's file so far (once finish() resolved). */
  readonly written: number[];
  #inFlight = 0;
  readonly #writing = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  constructor(options: SpillWriterOptions) {
    const count = options.count;
    this.#path = options.path;
    this.#flushBytes = options.flushBytes ?? 4 * 1024;
    this.#maxInFlight = options.maxInFlight ?? 1024 * 1024;
    this.#keptOpen = Math.min(count, options.maxOpenFiles ?? openHandleBudget());
    this.#handles = new Array<FileHandle | undefined>(count).fill(undefined);
    this.#buckets = Array.from({ length: count }, () => ({ pending: [], pendingBytes: 0, tail: Promise.resolve() }));
    this.written = new Array<number>(count).fill(0);
  }

  /** Buffers one line (with its newline) for a bucket; waits only while too much is in flight. */
  append(bucket: number, line: string): Promise<void> | undefined {
    const buffered = defined(this.#buckets[bucket], 'a spill bucket');
    buffered.pending.push(line);
    buffered.pendingBytes += line.length;
    if (buffered.pendingBytes >= this.#flushBytes) this.#flush(bucket);
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
  }

  async #drain(): Promise<void> {
    while (this.#busy() && this.#failure === undefined) await Promise.race(this.#writing);
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  #busy(): boolean {
    return this.#inFlight > this.#maxInFlight || this.#writing.size > MAX_WRITES;
  }

  #flush(bucket: number): void {
    const buffered = defined(this.#buckets[bucket], 'a spill bucket');
    const lines = buffered.pending;
    if (lines.length === 0) return;
    const text = lines.join('');
    buffered.pending = [];
    buffered.pendingBytes = 0;
    this.written[bucket] = (this.written[bucket] ?? 0) + text.length;
    this.#inFlight += text.length;
    const write = buffered.tail
      .then(() => this.#write(bucket, text))
      .then(
        () => undefined,
        (error: unknown) => {
          this.#failure ??= { error };
        },
      );
    const settled = write.then(() => {
      this.#inFlight -= text.length;
      this.#writing.delete(settled);
    });
    this.#writing.add(settled);
    buffered.tail = settled;
  }

  async #write(bucket: number, text: string): Promise<void> {
    if (this.#failure !== undefined) return; // the run is failing: write nothing more
    if (bucket >= this.#keptOpen) {
      await appendFile(this.#path(bucket), text, { mode: 0o600 });
      return;
    }
    const handle = (this.#handles[bucket] ??= await open(this.#path(bucket), 'a', 0o600));
    await handle.write(text);
  }
}
