import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileRefusedError } from '../../src/errors.js';
import { openOrderSource, type IngestOptions } from '../../src/ingest/openOrderSource.js';
import { HEADER, readAll, rejected, row, tempDir, valid } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

/** `rows` one-line orders; those for which `bad(i)` holds have an e-mail without @ (1-based row number). */
function csv(rows: number, bad: (i: number) => boolean): string {
  const out = [HEADER];
  for (let i = 1; i <= rows; i++)
    out.push(row({ orderRef: `R-${i}`, ...(bad(i) ? { email: 'no-at-sign.example.nl' } : {}) }));
  return out.join('\n') + '\n';
}

/** Reads a file to the end or to its refusal; the error (if any) and the source's counts. */
async function drain(file: string, options: IngestOptions): Promise<{ error: unknown; rows: number; items: number }> {
  const source = await openOrderSource(file, options);
  let items = 0;
  let error: unknown;
  try {
    for await (const item of source.items()) if (item.kind === 'rejected' || item.kind === 'valid') items++;
  } catch (caught) {
    error = caught;
  }
  return { error, rows: source.stats().rows, items };
}

describe('a file that is mostly wrong stops in its first read', () => {
  it('40,000 rows, 3 of 4 wrong: refused after the first 10,000 rows read, none of them handed on, the spill folder gone', async () => {
    const file = await tmp.file(
      'mostly-wrong.csv',
      csv(40_000, (i) => i % 4 !== 0),
    );
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const { error, rows, items } = await drain(file, {
      maxRejectedPercent: 50,
      spillThresholdBytes: 0,
      streamWindowRows: 0,
      bucketBytes: 64 * 1024,
      tmpDir: spill,
      threads: 0,
    });
    expect(error).toBeInstanceOf(FileRefusedError);
    expect((error as FileRefusedError).code).toBe('TOO_MANY_REJECTED');
    expect((error as FileRefusedError).message).toMatch(
      /^.*7500 of the first 10000 rows \(75%\) were rejected.*top error kinds: 7500 EMAIL_INVALID \(email\)/s,
    );
    // Read up to the judgement and no further (without it, all 40,000 rows are read and spilled first). The bad rows
    // read so far were handed on as they came (a file that spills reports them in its first read); validate and import
    // hold them back until the judgement (limitRejectionBatches), so nothing of the file is written or queued.
    expect(rows).toBe(10_000);
    expect(items).toBeLessThanOrEqual(7_500);
    expect(await readdir(spill)).toEqual([]);
  }, 120_000);

  it('the same with a validation thread: the encoded lines are judged as they come back', async () => {
    const file = await tmp.file(
      'mostly-wrong.csv',
      csv(40_000, (i) => i % 4 !== 0),
    );
    const { error, rows } = await drain(file, {
      maxRejectedPercent: 50,
      spillThresholdBytes: 0,
      streamWindowRows: 0,
      threads: 1,
    });
    expect((error as FileRefusedError).code).toBe('TOO_MANY_REJECTED');
    // A thread's batches are 512 records, two per thread under way: the judgement comes within a batch or two.
    expect(rows).toBeGreaterThanOrEqual(10_000);
    expect(rows).toBeLessThan(12_000);
  }, 120_000);

  it('under the share, or without maxRejectedPercent (a results file reading its input again), every row is read', async () => {
    const file = await tmp.file(
      'half-wrong.csv',
      csv(12_000, (i) => i % 2 === 0),
    );
    for (const options of [{ maxRejectedPercent: 50 }, {}]) {
      const { error, rows, items } = await drain(file, { ...options, spillThresholdBytes: 0, threads: 0 });
      expect(error).toBeUndefined();
      expect(rows).toBe(12_000);
      expect(items).toBe(12_000);
    }
  }, 120_000);
});

/** Total bytes of the files under `dir` (the spill folder and its private subfolder). */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name)).catch(() => undefined))?.size ?? 0;
  return total;
}

describe('the spill holds the valid data, not the rejected rows', () => {
  it('30,000 bad rows and 1,000 good orders: the spill stays under 4x the good rows plus 64 bytes per bad row', async () => {
    const lines = [HEADER];
    let goodBytes = 0;
    for (let i = 1; i <= 31_000; i++) {
      const good = i % 31 === 0;
      const text = row({
        orderRef: `B-${i}`,
        ...(good ? {} : { email: 'no-at-sign.example.nl', telephoneNumber: '0612345678' }),
      });
      if (good) goodBytes += text.length + 1;
      lines.push(text);
    }
    const file = await tmp.file('bad.csv', lines.join('\n') + '\n');
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const source = await openOrderSource(file, {
      spillThresholdBytes: 0,
      streamWindowRows: 0,
      bucketBytes: 64 * 1024,
      tmpDir: spill,
    });
    let peak = 0;
    let firstPass = true;
    let valid = 0;
    let rejected = 0;
    for await (const item of source.items()) {
      // The first item of the second pass: every spill file is written, the first one read back and removed.
      if (firstPass && item.kind === 'valid') {
        firstPass = false;
        peak = await folderBytes(spill);
      }
      if (item.kind === 'valid') valid++;
      else rejected++;
    }
    expect({ valid, rejected }).toEqual({ valid: 1_000, rejected: 30_000 });
    const bucketBytes = 64 * 1024 * 4; // at most one bucket's file gone when measured (a bucket holds ~64 KiB of input)
    expect(peak).toBeGreaterThan(goodBytes); // the valid rows are spilled
    // Without settling bad rows in the first read the spill is ~4x the whole file (about 22 MB here).
    expect(peak + bucketBytes).toBeLessThan(4 * goodBytes + 64 * 30_000);
    expect(await readdir(spill)).toEqual([]);
  }, 120_000);

  it('an order with a bad row: its other rows, before and after it, are rejected too (ORDER_NOT_SENT naming the line), in memory and spilled', async () => {
    const lines = [HEADER];
    for (let i = 1; i <= 3000; i++) lines.push(row({ orderRef: `F-${i}` }));
    lines.push(row({ orderRef: 'MIX', productId: '5001' })); // line 3002
    lines.push(row({ orderRef: 'MIX', productId: '5002', quantity: '-1' })); // line 3003: its own error
    lines.push(row({ orderRef: 'MIX', productId: '5003' })); // line 3004
    const file = await tmp.file('mix.csv', lines.join('\n') + '\n');
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const inMemory = await readAll(file, {});
    const spilled = await readAll(file, {
      spillThresholdBytes: 0,
      streamWindowRows: 0,
      bucketBytes: 16 * 1024,
      tmpDir: spill,
    });
    for (const items of [inMemory, spilled]) {
      expect(valid(items)).toHaveLength(3000);
      const mix = rejected(items).filter((item) => item.orderRef === 'MIX');
      expect(mix.flatMap((item) => item.rowLines).sort()).toEqual([3002, 3003, 3004]);
      expect(mix.flatMap((item) => item.errors.filter((e) => e.line === 3003).map((e) => e.code))).toEqual([
        'INTEGER_NOT_POSITIVE',
      ]);
    }
    // Spilled, the bad row is reported in the first read, on its own; the order's other rows after, naming it.
    const [bad, rest] = rejected(spilled).filter((item) => item.orderRef === 'MIX');
    expect(bad!.rowLines).toEqual([3003]);
    expect(rest!.rowLines).toEqual([3002, 3004]);
    expect(rest!.errors.map((e) => `${e.line}:${e.code}`)).toEqual(['3002:ORDER_NOT_SENT', '3004:ORDER_NOT_SENT']);
    expect(rest!.errors[0]!.message).toBe("not sent because line 3003 of this order (orderRef 'MIX') has errors.");
  });
});
