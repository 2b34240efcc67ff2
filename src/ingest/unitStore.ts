import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What the store needs of a first-pass unit: its group key. Units of one group are assembled together. */
export interface GroupedUnit {
  group: string;
}

/** How a unit becomes one line of a spill file and back (orders: unitCodec.ts). */
export interface UnitCodec<U> {
  encode(unit: U): string;
  decode(line: string): U;
}

/**
 * Holds first-pass units until every row of the file has been seen, then hands them back one
 * bucket at a time. Units with the same group key always land in the same bucket, so a bucket
 * can be assembled on its own; memory holds one bucket, not the file.
 */
export interface UnitStore<U extends GroupedUnit> {
  add(unit: U): Promise<void>;
  /** Buckets in turn; each bucket's units in the order they were added. */
  buckets(): AsyncGenerator<U[]>;
  /** Removes temporary files; safe to call more than once, also after an error. */
  dispose(): Promise<void>;
}

/** Options for createUnitStore. */
export interface UnitStoreOptions<U> {
  /** How units are written to and read from the spill files. */
  codec: UnitCodec<U>;
  /** 1 keeps everything in memory; more spills to that many temp files. */
  bucketCount: number;
  /** Parent of the temp folder; default the OS temp folder. */
  tmpDir?: string;
  /** Characters buffered per bucket before writing; default 16 Ki (up to 256 buckets buffer at once). */
  flushBytes?: number;
}

/** A store in memory (bucketCount 1) or spilling to temp files. */
export async function createUnitStore<U extends GroupedUnit>(options: UnitStoreOptions<U>): Promise<UnitStore<U>> {
  if (options.bucketCount <= 1) return memoryStore<U>();
  return spillStore(options.codec, options.bucketCount, options.tmpDir ?? tmpdir(), options.flushBytes ?? 16 * 1024);
}

function memoryStore<U extends GroupedUnit>(): UnitStore<U> {
  let units: U[] = [];
  return {
    add: async (unit) => {
      units.push(unit);
    },
    buckets: async function* () {
      const all = units;
      units = [];
      yield all;
    },
    dispose: async () => {
      units = [];
    },
  };
}

async function spillStore<U extends GroupedUnit>(codec: UnitCodec<U>, count: number, parent: string, flushBytes: number): Promise<UnitStore<U>> {
  const dir = await mkdtemp(join(parent, 'bulkorder-ingest-'));
  const handles: (FileHandle | undefined)[] = new Array(count).fill(undefined);
  const pending: string[][] = Array.from({ length: count }, () => []);
  const pendingBytes: number[] = new Array(count).fill(0);
  const written: boolean[] = new Array(count).fill(false);
  const path = (bucket: number): string => join(dir, `bucket-${bucket}.ndjson`);

  const flush = async (bucket: number): Promise<void> => {
    const lines = pending[bucket]!;
    if (lines.length === 0) return;
    pending[bucket] = [];
    pendingBytes[bucket] = 0;
    const handle = (handles[bucket] ??= await open(path(bucket), 'a'));
    written[bucket] = true;
    await handle.write(lines.join(''));
  };
  const closeAll = async (): Promise<void> => {
    await Promise.all(handles.map((handle) => handle?.close().catch(() => undefined)));
    handles.fill(undefined);
  };

  return {
    add: async (unit) => {
      const bucket = bucketOf(unit.group, count);
      const line = codec.encode(unit) + '\n';
      pending[bucket]!.push(line);
      pendingBytes[bucket]! += line.length;
      if (pendingBytes[bucket]! >= flushBytes) await flush(bucket);
    },
    buckets: async function* () {
      for (let bucket = 0; bucket < count; bucket++) await flush(bucket);
      await closeAll();
      for (let bucket = 0; bucket < count; bucket++) {
        if (!written[bucket]) continue;
        const units: U[] = [];
        let rest = '';
        // Read in pieces: the bucket's units are needed whole, its text is not.
        for await (const piece of createReadStream(path(bucket), { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
          const text = rest + (piece as string);
          let from = 0;
          for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', from)) {
            units.push(codec.decode(text.slice(from, end)));
            from = end + 1;
          }
          rest = text.slice(from);
        }
        await rm(path(bucket), { force: true }); // free the disk as we go
        yield units;
      }
    },
    dispose: async () => {
      await closeAll();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** FNV-1a: cheap, stable across runs and processes, spreads group keys evenly. */
export function bucketOf(group: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < group.length; i++) {
    hash ^= group.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}
