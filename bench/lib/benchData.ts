/**
 * Benchmark inputs: seeded CSV files from bench/generateOrders.ts, made once and kept in
 * bench/data/ (git-ignored: a 1M-row file is 121 MB and never committed).
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { journalPath } from '../../src/importer/importJournal.js';
import { projectRoot } from '../../src/paths.js';
import { generateOrders } from '../generateOrders.js';

export const dataDir = join(projectRoot, 'bench', 'data');

/** The path of a seeded `rows`-row gift-order CSV (20% multi-line orders), generated when missing. */
export async function orderFile(rows: number, seed = 1): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, `orders-${rows}-seed${seed}.csv`);
  if (!existsSync(path)) {
    // Written under a temporary name so an interrupted run never leaves a short file behind.
    const partial = `${path}.partial-${process.pid}`;
    await generateOrders(partial, { rows, seed, multiLineShare: 0.2, spread: 500 });
    await rename(partial, path);
  }
  return path;
}

/**
 * Forgets the earlier imports of a benchmark input: its import journal (`<file>.journal`). Every run imports the same
 * file into a Redis flushed (or new) since the last, which is exactly the loss the journal refuses (LEDGER_LOST);
 * a benchmark measures a first import, so the journal of the run before must not be there.
 */
export async function forgetImports(file: string): Promise<void> {
  await rm(journalPath(file), { force: true });
}
