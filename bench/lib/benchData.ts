/**
 * Benchmark inputs: seeded CSV files from bench/generateOrders.ts, made once and kept in
 * bench/data/ (git-ignored: a 1M-row file is 121 MB and never committed).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { journalPath } from '../../src/importer/importJournal.js';
import { projectRoot } from '../../src/paths.js';
import { generateOrders, mulberry32 } from '../generateOrders.js';

export const dataDir = join(projectRoot, 'bench', 'data');

/**
 * How the lines of one order lie in a benchmark file: `spread` up to 500 rows apart (the default, as the
 * first measurements), `grouped` next to each other (what ERP, webshop and Excel exports do), `shuffled` the
 * grouped file's rows in a seeded random order (the same rows, so the same orders and rejects).
 */
export type OrderFileShape = 'spread' | 'grouped' | 'shuffled';

/** The path of a seeded `rows`-row gift-order CSV (20% multi-line orders), generated when missing. */
export async function orderFile(rows: number, seed = 1, shape: OrderFileShape = 'spread'): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, `orders-${rows}-seed${seed}${shape === 'spread' ? '' : `-${shape}`}.csv`);
  if (!existsSync(path)) {
    // Written under a temporary name so an interrupted run never leaves a short file behind.
    const partial = `${path}.partial-${process.pid}`;
    if (shape === 'shuffled') await shuffleRows(await orderFile(rows, seed, 'grouped'), partial, seed);
    else await generateOrders(partial, { rows, seed, multiLineShare: 0.2, spread: shape === 'grouped' ? 1 : 500 });
    await rename(partial, path);
  }
  return path;
}

/** Writes `from`'s data rows in a seeded random order under its header (the generator writes no line breaks in cells). */
async function shuffleRows(from: string, to: string, seed: number): Promise<void> {
  const lines = (await readFile(from, 'utf8')).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const header = lines.shift()!;
  const random = mulberry32(seed + 7919);
  for (let i = lines.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [lines[i], lines[j]] = [lines[j]!, lines[i]!];
  }
  await writeFile(to, `${header}\n${lines.join('\n')}\n`);
}

/**
 * Forgets the earlier imports of a benchmark input: its import journal (`<file>.journal`). Every run imports the same
 * file into a Redis flushed (or new) since the last, which is exactly the loss the journal refuses (LEDGER_LOST);
 * a benchmark measures a first import, so the journal of the run before must not be there.
 */
export async function forgetImports(file: string): Promise<void> {
  await rm(journalPath(file), { force: true });
}
