/**
 * The records an import keeps for its results file, past its memory: a temp file written with back-pressure.
 * Each full buffer waits for its drain; a wait must not leave a listener behind (it did: one `error` listener a
 * drain, Node's MaxListenersExceededWarning on every file over 10,000 records).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeptItems } from '../../src/importer/keptItems.js';
import type { RecordItem } from '../../src/ingest/types.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A rejected record of about 2 KB: a few fill the temp file's 16 KiB buffer. */
function bulky(i: number): RecordItem<unknown> {
  return {
    kind: 'rejected',
    key: `K-${i}`,
    lines: [i + 2],
    rows: [],
    rowLines: [],
    errors: [{ code: 'TEST', message: 'x'.repeat(2_000) }],
  } as unknown as RecordItem<unknown>;
}

describe('KeptItems', () => {
  it('keeps 3,000 records past its memory in a temp file, every one back in order, without a listener left per drain', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kept-items-'));
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const kept = new KeptItems<unknown>(10, dir);
      for (let i = 0; i < 3_000; i++) await kept.add(bulky(i));
      const records = await kept.records();
      const keys: string[] = [];
      for await (const record of records as AsyncIterable<RecordItem<unknown>>) keys.push(record.key ?? '');
      expect(keys).toHaveLength(3_000);
      expect(keys[0]).toBe('K-0');
      expect(keys[2_999]).toBe('K-2999');
      kept.dispose();
      expect(await readdir(dir)).toEqual([]);
      // A warning is emitted on the next tick: give it one.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
