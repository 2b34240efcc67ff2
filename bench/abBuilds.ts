/**
 * One lever, measured alone: the same `bulkorder` command run from two builds in turn (A B A B ...),
 * each run its own process, and per run its CPU-seconds (user + system, every thread), peak RSS and
 * wall time. A machine shared with other work disturbs CPU-seconds and peak RSS far less than wall
 * time, and interleaving puts both builds through the same load, so the medians and the per-pair
 * ratios (B / A) are what to read.
 *
 *   node dist/bench/abBuilds.js <runs> <rootA> <rootB> -- <command and arguments>
 *   e.g. node dist/bench/abBuilds.js 3 /tmp/before . -- validate bench/data/orders-300000-seed1-grouped.csv --out /tmp/r.csv
 *
 * A root is a project folder whose `dist/` is built (`git archive <commit> | tar -x -C <dir>`, a
 * node_modules link, `npx tsc -p tsconfig.json && npm run build:lua`). Exit codes 0, 3 and 4 count as runs.
 * AB_BEFORE, when set, is a shell command run before each run (e.g. emptying the Redis an import writes to, and
 * removing the input's import journal).
 */
import { execSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode, type ChildResult } from './lib/nodeChild.js';
import { load, median, mib } from './lib/benchStats.js';

export interface AbRun {
  build: 'A' | 'B';
  load: number;
  cpuSeconds: number;
  peakRssBytes: number;
  wallSeconds: number;
}

/** The command a build's users run: its bundle (dist/bin/, since round 11), else dist/src/cli.js. */
function commandOf(root: string): string {
  const bundled = join(resolve(root), 'dist', 'bin', 'bulkorder.js');
  return existsSync(bundled) ? bundled : join(resolve(root), 'dist', 'src', 'cli.js');
}

/** Runs `args` with each root's command (commandOf), `runs` times each, interleaved (A first). */
export async function abBuilds(runs: number, roots: [string, string], args: string[]): Promise<AbRun[]> {
  const out: AbRun[] = [];
  for (let i = 0; i < runs; i++) {
    for (const [index, root] of roots.entries()) {
      if (process.env.AB_BEFORE !== undefined) execSync(process.env.AB_BEFORE, { stdio: 'ignore' });
      const loadNow = load();
      const run: ChildResult = await runNode(commandOf(root), args, {}, [0, 3, 4]);
      out.push({
        build: index === 0 ? 'A' : 'B',
        load: loadNow,
        cpuSeconds: run.cpuSeconds,
        peakRssBytes: run.peakRssBytes,
        wallSeconds: run.wallMs / 1000,
      });
    }
  }
  return out;
}

export function describeAb(runs: readonly AbRun[]): string {
  const of = (build: 'A' | 'B', pick: (r: AbRun) => number): number[] =>
    runs.filter((r) => r.build === build).map(pick);
  const lines = runs.map(
    (r) =>
      `  ${r.build} (load ${r.load}): cpu ${r.cpuSeconds.toFixed(2)} s, peak ${mib(r.peakRssBytes)}, wall ${r.wallSeconds.toFixed(2)} s`,
  );
  const pairs = of('A', (r) => r.cpuSeconds).map((a, i) => of('B', (r) => r.cpuSeconds)[i]! / a);
  const rss = of('A', (r) => r.peakRssBytes).map((a, i) => of('B', (r) => r.peakRssBytes)[i]! / a);
  const row = (build: 'A' | 'B'): string =>
    `  median ${build}: cpu ${median(of(build, (r) => r.cpuSeconds)).toFixed(2)} s, peak ${mib(median(of(build, (r) => r.peakRssBytes)))}, wall ${median(of(build, (r) => r.wallSeconds)).toFixed(2)} s`;
  return [
    ...lines,
    row('A'),
    row('B'),
    `  B / A per pair: cpu ${pairs.map((x) => x.toFixed(2)).join(', ')} (median ${median(pairs).toFixed(2)}); peak ${rss.map((x) => x.toFixed(2)).join(', ')} (median ${median(rss).toFixed(2)})`,
  ].join('\n');
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dash = process.argv.indexOf('--');
  const [runs, rootA, rootB] = process.argv.slice(2, dash === -1 ? undefined : dash);
  if (dash === -1 || runs === undefined || rootA === undefined || rootB === undefined) {
    process.stderr.write('usage: node dist/bench/abBuilds.js <runs> <rootA> <rootB> -- <command and arguments>\n');
    process.exitCode = 2;
  } else {
    const args = process.argv.slice(dash + 1);
    process.stdout.write(`${args.join(' ')}\n  A = ${rootA}, B = ${rootB}\n`);
    process.stdout.write(describeAb(await abBuilds(Number(runs), [rootA, rootB], args)) + '\n');
  }
}
