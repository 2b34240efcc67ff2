import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

/**
 * The areas of src/ and jobs/, lowest first (README, Design, holds the same list). An area is a
 * folder of src/ (with the file of the same name beside it: `services.ts` and `services/`), a file
 * at the top of src/, or jobs/. A module may import only from its own area or from a lower rank:
 * areas of one rank are siblings and import neither each other nor anything above.
 */
const RANKS: readonly (readonly string[])[] = [
  ['paths', 'errors', 'redisErrors', 'reference', 'textSink', 'heapSettings', 'cjsPackages'],
  ['logger', 'deliverySettings', 'target'],
  ['config', 'keyspace', 'queues'],
  ['configReport', 'redis', 'localRedis'],
  ['ingest', 'simulator', 'lua'],
  ['delivery', 'deliveryJob'],
  ['ledger'],
  ['kinds'],
  ['batches', 'metrics'],
  ['worker'],
  ['services'],
  ['importer'],
  ['deadLetter'],
  ['review', 'accounts', 'schedule', 'watch'],
  ['notify'],
  ['health'],
  ['dashboard', 'jobs'],
  ['assembly', 'library'],
  ['commands'],
  ['cli'],
];

/** Every relative import (static, `import type`, re-export or dynamic `import('...')`) of a file, resolved to a path from the project root. */
async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(join(projectRoot, file), 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.map((spec) =>
    relative(projectRoot, resolve(dirname(join(projectRoot, file)), spec)).replace(/\.js$/, '.ts'),
  );
}

async function tsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(projectRoot, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(projectRoot, join(e.parentPath, e.name)));
}

/** `src/worker/deliverRecord.ts` -> `worker`, `src/services.ts` -> `services`, `jobs/x.ts` -> `jobs`; undefined outside src/ and jobs/. */
function areaOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] === 'jobs') return 'jobs';
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  return parts.length > 2 ? parts[1] : parts[1]!.replace(/\.ts$/, '');
}

/** The imports that break the ranks, as `from -> to (area rank -> area rank)`, and the areas no rank names. */
function rankViolations(imports: readonly (readonly [string, string])[]): { upward: string[]; unranked: string[] } {
  const rank = new Map(RANKS.flatMap((areas, i) => areas.map((area) => [area, i] as const)));
  const upward: string[] = [];
  const unranked = new Set<string>();
  for (const [from, to] of imports) {
    const a = areaOf(from);
    const b = areaOf(to);
    if (a === undefined || b === undefined || a === b) continue;
    const ra = rank.get(a);
    const rb = rank.get(b);
    if (ra === undefined) unranked.add(a);
    if (rb === undefined) unranked.add(b);
    if (ra !== undefined && rb !== undefined && rb >= ra) upward.push(`${from} -> ${to} (${a} ${ra} -> ${b} ${rb})`);
  }
  return { upward, unranked: [...unranked].sort() };
}

async function allImports(): Promise<[string, string][]> {
  const pairs: [string, string][] = [];
  for (const file of [...(await tsFiles('src')), ...(await tsFiles('jobs'))]) {
    for (const target of await importsOf(file)) pairs.push([file, target]);
  }
  return pairs;
}

/** A command is `xxx.ts` (declares flags) plus, when its code is heavy, `xxxRun.ts` (loaded lazily by its action). */
function commandOf(file: string): string {
  return file.replace(/Run\.ts$/, '.ts');
}

describe('the dependency direction (README, Design)', () => {
  it('every import of src/ and jobs/ points to its own area or a lower rank, and every area has a rank', async () => {
    const { upward, unranked } = rankViolations(await allImports());
    expect(unranked).toEqual([]);
    expect(upward).toEqual([]);
  });

  it('the rank check refuses an upward import and one between siblings of a rank', () => {
    const { upward } = rankViolations([
      ['src/kinds/orders.ts', 'src/worker/deliverRecord.ts'], // kinds below worker: upward
      ['src/watch/dropFolder.ts', 'src/schedule/scheduleStore.ts'], // siblings of one rank
      ['src/worker/deliverRecord.ts', 'src/kinds/recordWording.ts'], // downward: allowed
      ['src/services/queueStatus.ts', 'src/services.ts'], // one area: allowed
    ]);
    expect(upward).toEqual([
      'src/kinds/orders.ts -> src/worker/deliverRecord.ts (kinds 7 -> worker 9)',
      'src/watch/dropFolder.ts -> src/schedule/scheduleStore.ts (watch 13 -> schedule 13)',
    ]);
  });

  it("README's Design section lists the same ranks", async () => {
    const readme = await readFile(join(projectRoot, 'README.md'), 'utf8');
    const block = /<!-- ranks -->\n```\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'README.md has a ```-fenced rank list after <!-- ranks -->').toBeDefined();
    const listed = block!
      .trim()
      .split('\n')
      .map((line) => /^\s*\d+\s+(.*?)\s*$/.exec(line)?.[1]?.split(/,\s*/) ?? []);
    expect(listed).toEqual(RANKS.map((areas) => [...areas]));
  });

  it('no command module imports another command module; options.ts is the only shared one and imports no command', async () => {
    const shared = 'src/commands/options.ts';
    const offending: string[] = [];
    for (const file of await tsFiles('src/commands')) {
      if (file === 'src/commands/index.ts') continue; // the one list that wires every command in
      for (const target of await importsOf(file)) {
        if (!target.startsWith('src/commands/') || target === shared) continue;
        if (file !== shared && commandOf(target) === commandOf(file)) continue; // a command's own lazily loaded half
        offending.push(`${file} -> ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
