import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileRefusedError } from '../../src/errors.js';
import { openOrderSource, type IngestOptions } from '../../src/ingest/openOrderSource.js';
import { HEADER, row, tempDir } from './ingestHelpers.js';

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
    for await (const item of source.items()) if (item) items++;
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
      bucketBytes: 64 * 1024,
      tmpDir: spill,
      threads: 0,
    });
    expect(error).toBeInstanceOf(FileRefusedError);
    expect((error as FileRefusedError).code).toBe('TOO_MANY_REJECTED');
    expect((error as FileRefusedError).message).toMatch(
      /^.*7500 of the first 10000 rows \(75%\) were rejected.*top error kinds: 7500 EMAIL_INVALID \(email\)/s,
    );
    // Read up to the judgement and no further (without it, all 40,000 rows are read and spilled first).
    expect(rows).toBe(10_000);
    expect(items).toBe(0);
    expect(await readdir(spill)).toEqual([]);
  });

  it('the same with a validation thread: the encoded lines are judged as they come back', async () => {
    const file = await tmp.file(
      'mostly-wrong.csv',
      csv(40_000, (i) => i % 4 !== 0),
    );
    const { error, rows } = await drain(file, { maxRejectedPercent: 50, spillThresholdBytes: 0, threads: 1 });
    expect((error as FileRefusedError).code).toBe('TOO_MANY_REJECTED');
    // A thread's batches are 512 records, two per thread under way: the judgement comes within a batch or two.
    expect(rows).toBeGreaterThanOrEqual(10_000);
    expect(rows).toBeLessThan(12_000);
  });

  it('under the share, or without maxRejectedPercent (a results file reading its input again), every row is read', async () => {
    const file = await tmp.file(
      'half-wrong.csv',
      csv(24_000, (i) => i % 2 === 0),
    );
    for (const options of [{ maxRejectedPercent: 50 }, {}]) {
      const { error, rows, items } = await drain(file, { ...options, spillThresholdBytes: 0, threads: 0 });
      expect(error).toBeUndefined();
      expect(rows).toBe(24_000);
      expect(items).toBe(24_000);
    }
  });
});
