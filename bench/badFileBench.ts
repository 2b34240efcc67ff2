/**
 * Issue 26, item 10: a large file of almost only bad rows. Writes a seeded CSV of about `mib`
 * MiB (one-line orders, every row spoiled by one typical mistake except `good` orders spread
 * through the file) into a temp folder, then runs the real CLI on it twice, each in its own process:
 *
 *   1. `validate <file>` with the default --max-rejected (50%): expected exit 3, TOO_MANY_REJECTED;
 *   2. `validate <file> --max-rejected 100%`: every row read, exit 4, the valid orders counted.
 *
 * For each: wall time, peak RSS (bench/lib/peakRss.ts), the largest size the spill folder reached
 * (TMPDIR points the child's spill folders into the temp folder, measured every 100 ms) and the
 * size of the rejects file. Everything it wrote is removed at the end.
 *
 *   node dist/bench/badFileBench.js [mib=1024] [good=2000] [--refused-only]
 *
 * Bound by: one CPU core (parse + validate), then the disk for the spill and the rejects file.
 */
import { createWriteStream, realpathSync } from 'node:fs';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliEntry, startNode } from './lib/nodeChild.js';
import { load, mib, rate } from './lib/benchStats.js';
import { HEADER, orderRows } from './generateOrders.js';

/** One run of the CLI on the bad file. */
export interface BadFileRun {
  args: string[];
  exitCode: number | string;
  seconds: number;
  peakRssBytes: number;
  /** Largest total size of the spill folder seen during the run. */
  peakSpillBytes: number;
  rejectsBytes: number;
  /** From --json: rows read, valid orders (undefined when the file was refused). */
  rows?: number;
  valid?: number;
  /** The refusal's code, when refused. */
  refusal?: string;
}

export interface BadFileFigures {
  fileBytes: number;
  fileRows: number;
  goodOrders: number;
  load: number;
  refused: BadFileRun;
  /** Absent with --refused-only. */
  everything?: BadFileRun;
}

/** A CSV of about `bytes`: one-line orders, all spoiled but `good` of them, evenly spaced. */
async function writeBadFile(path: string, bytes: number, good: number): Promise<{ rows: number; bytes: number }> {
  // The average row length, to space the good rows evenly over the rows the size allows.
  let sample = 0;
  let sampled = 0;
  for (const row of orderRows({ rows: 2000, seed: 7, multiLineShare: 0 })) {
    sample += row.join(',').length + 1;
    sampled++;
  }
  const rows = Math.max(good, Math.floor(bytes / (sample / sampled)));
  const every = Math.max(1, Math.floor(rows / good));
  const out = createWriteStream(path);
  let batch: string[] = [HEADER.join(',')];
  let written = 0;
  let index = 0;
  for (const row of orderRows({ rows, seed: 7, multiLineShare: 0, refPrefix: 'BAD' })) {
    if (index % every !== every - 1 || Math.floor(index / every) >= good) spoil(row, index);
    index++;
    batch.push(row.join(','));
    if (batch.length >= 4096) {
      const text = batch.join('\n') + '\n';
      batch = [];
      written += Buffer.byteLength(text);
      if (!out.write(text)) await once(out, 'drain');
    }
  }
  const text = batch.join('\n') + '\n';
  written += Buffer.byteLength(text);
  out.end(text);
  await once(out, 'finish');
  return { rows, bytes: written };
}

/** The mistakes of bench/generateOrders.ts, in turn: a fractional quantity, a national phone number, an e-mail without @, a house number with a letter glued on. */
function spoil(row: string[], index: number): void {
  const kind = index % 4;
  if (kind === 0) row[13] = '1.5';
  else if (kind === 1) row[11] = row[11]!.replace(/^\+(31|32|49)/, '0');
  else if (kind === 2) row[10] = row[10]!.replace('@', ' at ');
  else row[13] = '-2';
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    total += await stat(join(entry.parentPath, entry.name)).then(
      (info) => info.size,
      () => 0,
    );
  }
  return total;
}

async function run(file: string, spill: string, rejects: string, extra: string[]): Promise<BadFileRun> {
  const args = ['validate', file, '--out', rejects, ...extra];
  const started = await startNode(cliEntry, args, { LOG_LEVEL: 'warn', TMPDIR: spill });
  let peakSpillBytes = 0;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      peakSpillBytes = Math.max(peakSpillBytes, await folderBytes(spill).catch(() => 0));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const result = await started.done;
  polling = false;
  await poll;
  const rejectsBytes = await stat(rejects).then(
    (info) => info.size,
    () => 0,
  );
  await rm(rejects, { force: true });
  const figures: BadFileRun = {
    args: args.slice(2),
    exitCode: result.code,
    seconds: result.wallMs / 1000,
    peakRssBytes: result.peakRssBytes,
    peakSpillBytes,
    rejectsBytes,
  };
  if (/were rejected, more than the allowed/.test(result.stderr)) figures.refusal = 'TOO_MANY_REJECTED';
  const rows = summaryCount(result.stdout, 'rows');
  const valid = summaryCount(result.stdout, 'valid');
  if (rows !== undefined) figures.rows = rows;
  if (valid !== undefined) figures.valid = valid;
  if (result.code !== 3 && result.code !== 4)
    throw new Error(`validate ${args.join(' ')} exited ${result.code}:\n${result.stderr.slice(-2000)}`);
  return figures;
}

/** Rows and valid orders from the text summary (`--json` would stream every error through the pipe). */
function summaryCount(stdout: string, label: string): number | undefined {
  const match = new RegExp(`^\\s+${label}\\s+(\\d+)`, 'm').exec(stdout);
  return match === null ? undefined : Number(match[1]);
}

export async function badFileBench(mebibytes: number, good: number, refusedOnly = false): Promise<BadFileFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-badfile-'));
  try {
    const file = join(dir, 'mostly-wrong.csv');
    const spill = join(dir, 'spill');
    await mkdir(spill);
    const written = await writeBadFile(file, mebibytes * 2 ** 20, good);
    const rejects = join(dir, 'mostly-wrong.rejects.csv');
    const loadNow = load();
    const refused = await run(file, spill, rejects, []);
    const everything = refusedOnly ? undefined : await run(file, spill, rejects, ['--max-rejected', '100%']);
    return {
      fileBytes: written.bytes,
      fileRows: written.rows,
      goodOrders: good,
      load: loadNow,
      refused,
      ...(everything === undefined ? {} : { everything }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function describeBadFile(f: BadFileFigures): string {
  const line = (r: BadFileRun): string =>
    `  ${r.args.join(' ') || '(default)'}: exit ${r.exitCode}${r.refusal === undefined ? '' : ` ${r.refusal}`}, ` +
    `${r.seconds.toFixed(1)} s, peak RSS ${mib(r.peakRssBytes)}, spill peak ${mib(r.peakSpillBytes)}, ` +
    `rejects ${mib(r.rejectsBytes)}${r.valid === undefined ? '' : `, ${rate(r.rows ?? 0)} rows, ${rate(r.valid)} valid`}`;
  return [
    `bad file ${mib(f.fileBytes)}, ${rate(f.fileRows)} rows, ${rate(f.goodOrders)} good orders (load ${f.load}):`,
    line({ ...f.refused, args: [] }),
    ...(f.everything === undefined ? [] : [line({ ...f.everything, args: ['--max-rejected', '100%'] })]),
  ].join('\n');
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [size, good] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const refusedOnly = process.argv.includes('--refused-only');
  const figures = await badFileBench(Number(size ?? 1024), Number(good ?? 2000), refusedOnly);
  process.stdout.write(describeBadFile(figures) + '\n');
}
