/**
 * Benchmarks #1 and #3: `bulkorder validate` (the real CLI in its own process) against the bare
 * baseline (csv-parse + the row schema in a loop, bench/baselines/bareValidate.ts), on the same
 * seeded file, one after the other in the same run. Reports rows/s and each process's peak RSS.
 *
 *   node dist/bench/validateBench.js [rows=100000]
 *
 * Bound by: one CPU core of the measured process (both are single-threaded; reading the file
 * is page cache). A faster core scales both alike; more cores change neither.
 */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { realpathSync } from 'node:fs';
import { benchScript, cliEntry, runNode } from './lib/nodeChild.js';
import { orderFile } from './lib/benchData.js';
import { load, mib, rate } from './lib/benchStats.js';

export interface ValidateFigures {
  rows: number;
  load: number;
  ours: { rowsPerSecond: number; peakRssBytes: number; seconds: number };
  bare: { rowsPerSecond: number; peakRssBytes: number; seconds: number };
  /** ours / bare, rows per second. */
  ratio: number;
}

export async function validateBench(rows: number): Promise<ValidateFigures> {
  const file = await orderFile(rows);
  const rejects = join(tmpdir(), `bench-validate-${process.pid}.rejects.csv`);
  const loadNow = load();
  const ours = await runNode(cliEntry, ['validate', file, '--json', '--out', rejects], { LOG_LEVEL: 'warn' }, [0, 4]);
  await rm(rejects, { force: true });
  const report = JSON.parse(ours.stdout) as { rows: number };
  if (report.rows !== rows) throw new Error(`validate counted ${report.rows} rows, expected ${rows}`);
  const bare = await runNode(benchScript('baselines/bareValidate'), [file]);
  const bareRows = (JSON.parse(bare.stdout) as { rows: number }).rows;
  if (bareRows !== rows) throw new Error(`bare validate counted ${bareRows} rows, expected ${rows}`);
  const oursRate = rows / (ours.wallMs / 1000);
  const bareRate = rows / (bare.wallMs / 1000);
  return {
    rows,
    load: loadNow,
    ours: { rowsPerSecond: oursRate, peakRssBytes: ours.peakRssBytes, seconds: ours.wallMs / 1000 },
    bare: { rowsPerSecond: bareRate, peakRssBytes: bare.peakRssBytes, seconds: bare.wallMs / 1000 },
    ratio: oursRate / bareRate,
  };
}

export function describeValidate(f: ValidateFigures): string {
  return (
    `validate ${rate(f.rows)} rows (load ${f.load}): ours ${rate(f.ours.rowsPerSecond)} rows/s, peak ${mib(f.ours.peakRssBytes)}; ` +
    `bare ${rate(f.bare.rowsPerSecond)} rows/s, peak ${mib(f.bare.peakRssBytes)}; ratio ${f.ratio.toFixed(2)}x`
  );
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(describeValidate(await validateBench(Number(process.argv[2] ?? 100_000))) + '\n');
}
