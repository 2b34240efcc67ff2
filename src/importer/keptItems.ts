import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createSpillDir, removeSpillDir } from '../ingest/spillDir.js';
import type { RecordItem } from '../ingest/types.js';
import { defined } from '../errors.js';

/**
 * The records an import read, kept for its results file (`import --wait`), so the file need not be
 * read and validated a second time: in memory up to `memoryLimit`, then, for a longer file, all of
 * them in a private temp file (the spill folders' kind: mode 0700, removed at the end, on exit and at
 * the next start after a crash), one JSON line each without the source rows (the results file does
 * not show them): a few hundred bytes an order on disk, none in memory. A temp file that cannot be
 * written (a full disk) is given up: the results file then reads the input again, as before.
 */
export class KeptItems<P> {
  readonly #memoryLimit: number;
  readonly #parent: string;
  #memory: RecordItem<P>[] | undefined = [];
  #spool: { dir: string; path: string; out: WriteStream; failed: boolean } | undefined;

  constructor(memoryLimit: number, tmpDir = tmpdir()) {
    this.#memoryLimit = memoryLimit;
    this.#parent = tmpDir;
  }

  /** Keeps one more record (in the order read). */
  async add(item: RecordItem<P>): Promise<void> {
    if (this.#memory !== undefined) {
      if (this.#memory.length < this.#memoryLimit) {
        this.#memory.push(item);
        return;
      }
      const kept = this.#memory;
      this.#memory = undefined;
      this.#open();
      for (const earlier of kept) await this.#write(earlier);
    }
    await this.#write(item);
  }

  /**
   * The records kept, in the order added; undefined when they could not be kept (the input is read again).
   * Records from the temp file have no source rows (`rows`, `rowLines` empty).
   */
  async records(): Promise<readonly RecordItem<P>[] | AsyncIterable<RecordItem<P>> | undefined> {
    if (this.#memory !== undefined) return this.#memory;
    const spool = defined(this.#spool, 'the spool (opened when memory was given up)');
    if (!spool.failed) {
      spool.out.end();
      await once(spool.out, 'close').catch(() => undefined);
    }
    if (spool.failed) return undefined;
    return readSpool<P>(spool.path);
  }

  /** Frees what is kept (memory, the temp file); safe to call more than once. */
  dispose(): void {
    this.#memory = [];
    if (this.#spool === undefined) return;
    this.#spool.out.destroy();
    removeSpillDir(this.#spool.dir);
    this.#spool = undefined;
  }

  #open(): void {
    const dir = createSpillDir(this.#parent);
    const path = join(dir, 'records.ndjson');
    const out = createWriteStream(path);
    const spool = { dir, path, out, failed: false };
    out.on('error', () => {
      spool.failed = true; // given up: the results file reads the input again
    });
    this.#spool = spool;
  }

  async #write(item: RecordItem<P>): Promise<void> {
    const spool = defined(this.#spool, 'the spool (opened when memory was given up)');
    if (spool.failed) return;
    const { rows: _rows, rowLines: _rowLines, ...kept } = item;
    // once() rejects on 'error' by itself and drops its listeners either way (a second once(…, 'error') in a
    // race stayed registered after each drain: Node's MaxListenersExceededWarning on a file over 10,000 records).
    if (!spool.out.write(`${JSON.stringify(kept)}\n`)) await once(spool.out, 'drain').catch(() => undefined);
  }
}

async function* readSpool<P>(path: string): AsyncGenerator<RecordItem<P>> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    const item = JSON.parse(line) as RecordItem<P>;
    item.rows = [];
    item.rowLines = [];
    yield item;
  }
}
