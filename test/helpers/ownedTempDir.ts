import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepStaleDirs } from '../../src/ingest/spillDir.js';

/** Folders made here and not yet removed: removed when the test process exits, whatever the tests did. */
const live = new Set<string>();
process.once('exit', () => {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
});

/**
 * A private temp folder `<tmp>/<prefix><pid>-XXXXXX` for a test's own server (a redis-server's data). Made after
 * sweeping the folders of this prefix that a killed test run left (their pid is gone), removed at exit if the test
 * did not remove it: a run stopped midway leaves nothing behind for long.
 */
export function ownedTempDir(prefix: string): string {
  sweepStaleDirs(tmpdir(), prefix);
  const dir = mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`));
  live.add(dir);
  return dir;
}

/** Removes a folder ownedTempDir made (idempotent). */
export async function removeOwnedTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  live.delete(dir);
}
