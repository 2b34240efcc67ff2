/**
 * Peak RSS of `bulkorder validate` (the real CLI in its own process) on two shapes of file:
 * 400,000 rows of one order (refused whole: over the maximum of product lines, never held) and
 * 1,000,000 rows of many orders (bench/generateOrders.ts, 20% multi-line). Memory, not speed:
 * the budget is 200 MB whatever the shape (README, "Input files").
 *
 *   node dist/bench/memoryShapesBench.js [oneOrderRows=400000] [manyOrdersRows=1000000]
 */
import { createWriteStream, existsSync, realpathSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { cliEntry, runNode } from './lib/nodeChild.js';
import { dataDir, orderFile } from './lib/benchData.js';
import { load, mib } from './lib/benchStats.js';
import { HEADER } from './generateOrders.js';

export interface ShapeFigure {
  shape: string;
  rows: number;
  peakRssBytes: number;
  seconds: number;
  exitCode: number | string;
}

/** `rows` product lines under one orderRef, distinct products, one recipient. */
async function oneOrderFile(rows: number): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, `one-order-${rows}.csv`);
  if (existsSync(path)) return path;
  const partial = `${path}.partial-${process.pid}`;
  const out = createWriteStream(partial);
  out.write(HEADER.join(',') + '\n');
  for (let i = 0; i < rows; i++) {
    const line = `HUGE-1,1001,Jan,de Vries,Keizersgracht,112,1015 CX,Amsterdam,NL,nl,jan.devries@example.nl,+31612345678,${5001 + i},1\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await rename(partial, path);
  return path;
}

async function measure(shape: string, file: string, rows: number): Promise<ShapeFigure> {
  const rejects = join(tmpdir(), `bench-shapes-${process.pid}.rejects.csv`);
  const run = await runNode(cliEntry, ['validate', file, '--json', '--out', rejects], { LOG_LEVEL: 'warn' }, [0, 4]);
  await rm(rejects, { force: true });
  const report = JSON.parse(run.stdout) as { rows: number };
  if (report.rows !== rows) throw new Error(`validate counted ${report.rows} rows, expected ${rows}`);
  return { shape, rows, peakRssBytes: run.peakRssBytes, seconds: run.wallMs / 1000, exitCode: run.code };
}

export async function memoryShapesBench(oneOrderRows: number, manyOrdersRows: number): Promise<ShapeFigure[]> {
  return [
    await measure('one order', await oneOrderFile(oneOrderRows), oneOrderRows),
    await measure('many orders', await orderFile(manyOrdersRows), manyOrdersRows),
  ];
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const figures = await memoryShapesBench(Number(process.argv[2] ?? 400_000), Number(process.argv[3] ?? 1_000_000));
  for (const f of figures)
    process.stdout.write(
      `validate ${f.rows} rows, ${f.shape} (load ${load()}): peak ${mib(f.peakRssBytes)}, ${f.seconds.toFixed(1)} s, exit ${f.exitCode}\n`,
    );
}
