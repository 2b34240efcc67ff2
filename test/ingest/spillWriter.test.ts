import { mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openHandleBudget, SpillWriter } from '../../src/ingest/spillWriter.js';
import { createUnitStore } from '../../src/ingest/unitStore.js';
import { ORDER_SCHEMA } from '../../src/ingest/openOrderSource.js';
import { resolveColumns } from '../../src/ingest/resolveColumns.js';
import type { OrderUnit } from '../../src/ingest/orderUnit.js';
import { HEADER, row, tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('spill writes behind the reader', () => {
  it('keeps each bucket in the order appended, with many writes under way', async () => {
    const path = (bucket: number): string => join(tmp.dir, `b${bucket}`);
    const writer = new SpillWriter({ count: 3, path, flushBytes: 10, maxInFlight: 64 });
    let waited = 0;
    for (let i = 0; i < 3000; i++) {
      const wait = writer.append(i % 3, `${i}\n`);
      if (wait !== undefined) {
        waited++;
        await wait;
      }
    }
    await writer.finish();
    expect(waited).toBeGreaterThan(0); // the in-flight bound held the appender back
    for (let bucket = 0; bucket < 3; bucket++) {
      const numbers = (await readFile(path(bucket), 'utf8')).trim().split('\n').map(Number);
      expect(numbers).toEqual(Array.from({ length: 1000 }, (_, k) => k * 3 + bucket));
      expect(writer.written[bucket]).toBe(numbers.join('\n').length + 1);
    }
  });

  it('writes lines as UTF-8 bytes, whole, in order: multi-byte text, lines longer than the buffer, buffers reused', async () => {
    const path = (bucket: number): string => join(tmp.dir, `u${bucket}`);
    const writer = new SpillWriter({ count: 2, path, flushBytes: 32, maxInFlight: 100 });
    const lines = Array.from({ length: 400 }, (_, i) =>
      i % 9 === 0 ? `${i} ${'straße Zürich 東京 🚚'.repeat(1 + (i % 4))}\n` : `${i} é\n`,
    );
    for (const [i, line] of lines.entries()) await writer.append(i % 2, line);
    await writer.finish();
    for (let bucket = 0; bucket < 2; bucket++) {
      const expected = lines.filter((_, i) => i % 2 === bucket).join('');
      expect(await readFile(path(bucket), 'utf8')).toBe(expected);
      expect(writer.written[bucket]).toBe(Buffer.byteLength(expected)); // bytes, not characters
    }
  });

  it('a full disk surfaces as the write error itself, from a later append or from finish, never as an unhandled rejection', async () => {
    const writer = new SpillWriter({ count: 2, path: () => '/dev/full', flushBytes: 8 });
    let thrown: unknown;
    try {
      for (let i = 0; i < 10_000; i++) await writer.append(i % 2, 'a line of text\n');
      await writer.finish();
    } catch (error) {
      thrown = error;
    }
    await writer.close();
    expect((thrown as NodeJS.ErrnoException).code).toBe('ENOSPC');
    await expect(writer.finish()).rejects.toBe(thrown); // the same error again, not another one
  });

  it('a store whose spill files hit a full disk throws SPILL_WRITE_FAILED (exit 5) naming its folder, and still disposes cleanly', async () => {
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const plan = resolveColumns('full.csv', HEADER.split(','));
    const store = await createUnitStore<OrderUnit>({ codec: ORDER_SCHEMA.codec(plan), bucketCount: 4, tmpDir: spill });
    const [dir] = await readdir(spill);
    for (let bucket = 0; bucket < 4; bucket++) await symlink('/dev/full', join(spill, dir!, `bucket-${bucket}.ndjson`));
    const failure = (async () => {
      for (let line = 2; line < 2002; line++)
        await store.add(
          ORDER_SCHEMA.csvUnit({ kind: 'record', line, values: row({ orderRef: `F-${line}` }).split(',') }, plan, {}),
        );
      for await (const _bucket of store.buckets()) void _bucket;
    })();
    await expect(failure).rejects.toMatchObject({
      code: 'SPILL_WRITE_FAILED',
      exitCode: 5,
      details: { path: join(spill, dir!), errno: 'ENOSPC' },
      message: expect.stringContaining(`could not write ${join(spill, dir!)} (ENOSPC: no space left on the device)`),
    });
    await store.dispose();
    expect(await readdir(spill)).toEqual([]);
  });
});

describe('openHandleBudget', () => {
  const limits = (soft: string, hard: string) =>
    `Limit                     Soft Limit           Hard Limit           Units     \n` +
    `Max processes             95359                95359                processes \n` +
    `Max open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     \n`;

  it('keeps the soft limit of open files less 256 for the rest of the process', () => {
    expect(openHandleBudget(limits('20000', '20000'))).toBe(19_744);
    expect(openHandleBudget(limits('1024', '524288'))).toBe(768);
    expect(openHandleBudget(limits('200', '200'))).toBe(0);
    expect(openHandleBudget(limits('unlimited', 'unlimited'))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('keeps 256 open where the limit cannot be read', () => {
    expect(openHandleBudget('no such line\n')).toBe(256);
  });

  it("reads this process's own limit on Linux", () => {
    if (process.platform !== 'linux') return;
    expect(openHandleBudget()).toBeGreaterThan(0);
  });
});
