/**
 * Benchmarks #1 and #3 (issue 35's validate goals): `bulkorder validate` (the real CLI in its own
 * process) of a seeded file whose orders' lines are next to each other (`grouped`, as exports are),
 * and of its `shuffled` copy (the same rows in a random order: the spill path), beside the bare
 * loops in the same run, on the grouped file:
 *   - bare: csv-parse `columns: true`, one zod schema per row, consecutive rows merged
 *     (bench/baselines/bareGrouped.ts), the baseline;
 *   - bare rows: csv-parse + the product's own row check, validateRow (bench/baselines/bareValidate.ts),
 *     the baseline of the earlier issues, for comparison.
 * Reports rows/s, CPU-seconds and peak RSS of each process; checks that the shuffled copy gives the
 * same orders and rejects as the grouped file.
 *
 *   node dist/bench/validateBench.js [rows=100000] [shapes=grouped,shuffled]
 *
 * Bound by: the CPU of the measured process (the file is in the page cache).
 */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { realpathSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { benchScript, cliEntry, runNode, type ChildResult } from './lib/nodeChild.js';
import { orderFile, type OrderFileShape } from './lib/benchData.js';
import { load, mib, rate } from './lib/benchStats.js';

/** One process's figures. */
export interface ProcessFigures {
  rowsPerSecond: number;
  seconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
}

/** One `bulkorder validate` of one shape of the file. */
export interface ValidateRun extends ProcessFigures {
  shape: OrderFileShape;
  orders: number;
  valid: number;
  rejected: number;
  /** Rejected rows as their cells, sorted (line numbers left out: they differ between shapes). */
  rejectedRows: string[];
}

export interface ValidateFigures {
  rows: number;
  load: number;
  /** The first shape measured (grouped unless told otherwise): the goal's figure. */
  ours: ValidateRun;
  /** Every shape measured, in order. */
  shapes: ValidateRun[];
  /** The baseline on the first shape's file: csv-parse columns, a zod schema per row, consecutive rows merged. */
  bare: ProcessFigures;
  /** The earlier baseline (csv-parse + validateRow) on the same file. */
  bareRows: ProcessFigures;
  /** ours / bare, rows per second. */
  ratio: number;
  /** Each other shape's seconds over the first's (issue 35: the shuffled copy within 2.5x of the grouped file). */
  slowdown: Record<string, number>;
  /** Whether every shape gave the same orders (count, valid) and the same rejected rows as the first. */
  sameOrders: boolean;
}

/** The rows of a rejects file, as lists of cells. */
function readRows(bytes: Buffer): string[][] {
  const rows: unknown = parse(bytes, { bom: true, relax_column_count: true });
  return rows as string[][];
}

function figures(rows: number, run: ChildResult): ProcessFigures {
  const seconds = run.wallMs / 1000;
  return { rowsPerSecond: rows / seconds, seconds, cpuSeconds: run.cpuSeconds, peakRssBytes: run.peakRssBytes };
}

async function ours(rows: number, shape: OrderFileShape): Promise<ValidateRun> {
  const file = await orderFile(rows, 1, shape);
  const rejects = join(tmpdir(), `bench-validate-${process.pid}-${shape}.rejects.csv`);
  try {
    const run = await runNode(cliEntry, ['validate', file, '--json', '--out', rejects], { LOG_LEVEL: 'warn' }, [0, 4]);
    const report = JSON.parse(run.stdout) as {
      rows: number;
      orders: number;
      valid: number;
      rejected: number;
      rejectsFile: string | null;
    };
    if (report.rows !== rows) throw new Error(`validate counted ${report.rows} rows of ${shape}, expected ${rows}`);
    const rejectedRows =
      report.rejectsFile === null
        ? []
        : readRows(await readFile(rejects))
            .slice(1)
            .map((cells) => JSON.stringify(cells.slice(0, -3))) // reject_line, reject_codes, reject_reasons
            .sort();
    return {
      shape,
      ...figures(rows, run),
      orders: report.orders,
      valid: report.valid,
      rejected: report.rejected,
      rejectedRows,
    };
  } finally {
    await rm(rejects, { force: true });
  }
}

async function bare(rows: number, script: string, shape: OrderFileShape): Promise<ProcessFigures> {
  const run = await runNode(benchScript(script), [await orderFile(rows, 1, shape)]);
  const counted = (JSON.parse(run.stdout) as { rows: number }).rows;
  if (counted !== rows) throw new Error(`${script} counted ${counted} rows, expected ${rows}`);
  return figures(rows, run);
}

export async function validateBench(
  rows: number,
  shapes: readonly OrderFileShape[] = ['grouped', 'shuffled'],
): Promise<ValidateFigures> {
  const first = shapes[0];
  if (first === undefined) throw new Error('validateBench: no shape to measure');
  const loadNow = load();
  // Alternated: the bare loop, ours on each shape, the earlier bare loop.
  const bareGrouped = await bare(rows, 'baselines/bareGrouped', first);
  const runs: ValidateRun[] = [];
  for (const shape of shapes) runs.push(await ours(rows, shape));
  const bareRows = await bare(rows, 'baselines/bareValidate', first);
  const head = runs[0]!;
  const same = (run: ValidateRun): boolean =>
    run.orders === head.orders &&
    run.valid === head.valid &&
    run.rejectedRows.length === head.rejectedRows.length &&
    run.rejectedRows.every((row, i) => row === head.rejectedRows[i]);
  return {
    rows,
    load: loadNow,
    ours: head,
    shapes: runs,
    bare: bareGrouped,
    bareRows,
    ratio: head.rowsPerSecond / bareGrouped.rowsPerSecond,
    slowdown: Object.fromEntries(runs.slice(1).map((run) => [run.shape, run.seconds / head.seconds])),
    sameOrders: runs.every(same),
  };
}

export function describeValidate(f: ValidateFigures): string {
  const process = (p: ProcessFigures): string =>
    `${rate(p.rowsPerSecond)} rows/s (${p.seconds.toFixed(1)} s, CPU ${p.cpuSeconds.toFixed(1)} s), peak ${mib(p.peakRssBytes)}`;
  return [
    `validate ${rate(f.rows)} rows (load ${f.load}):`,
    ...f.shapes.map(
      (run, i) =>
        `  ours, ${run.shape}: ${process(run)}; ${rate(run.orders)} orders, ${rate(run.rejected)} rejected` +
        (i === 0
          ? `; ratio ${f.ratio.toFixed(2)}x`
          : `; ${f.slowdown[run.shape]!.toFixed(2)}x the time of ${f.ours.shape}`),
    ),
    `  bare (csv-parse columns + zod, consecutive rows merged), ${f.ours.shape}: ${process(f.bare)}`,
    `  bare rows (csv-parse + validateRow), ${f.ours.shape}: ${process(f.bareRows)}`,
    `  same orders and rejects in every shape: ${f.sameOrders ? 'yes' : 'NO'}`,
  ].join('\n');
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const shapes = (process.argv[3]?.split(',') ?? ['grouped', 'shuffled']) as OrderFileShape[];
  process.stdout.write(describeValidate(await validateBench(Number(process.argv[2] ?? 100_000), shapes)) + '\n');
}
