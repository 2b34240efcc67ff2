import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { importsIn } from '../helpers/importsOf.js';

/**
 * The areas of src/ and jobs/, lowest first (README, Design, holds the same list). An area is a
 * folder of src/ (with the file of the same name beside it: `services.ts` and `services/`), a file
 * at the top of src/, or jobs/. A module may import only from its own area or from a lower rank:
 * areas of one rank are siblings and import neither each other nor anything above.
 */
const RANKS: readonly (readonly string[])[] = [
  ['paths', 'errorCodes', 'redisErrors', 'reference', 'textSink', 'heapSettings', 'cjsPackages', 'timeText'],
  ['errors', 'logger', 'deliverySettings', 'target'],
  ['config', 'keyspace', 'queues', 'files'],
  ['configReport', 'redis', 'tracing'],
  ['ingest', 'simulator', 'lua'],
  ['delivery', 'deliveryJob'],
  ['ledger'],
  ['kinds'],
  ['batches', 'metrics'],
  ['worker'],
  ['services'],
  ['importer'],
  ['deadLetter'],
  ['review', 'accounts', 'schedule', 'watch', 'open'],
  ['notify'],
  ['health'],
  ['dashboard', 'jobs'],
  ['assembly', 'library'],
  ['commands'],
  ['cli'],
  ['bin'],
];

/** One import of a file: the module it loads (from the project root), or why it cannot be checked. */
interface Import {
  from: string;
  /** The file it resolves to (`.js` read as `.ts`), from the root; undefined when computed. */
  to: string | undefined;
  form: string;
  line: number;
}

/**
 * Every relative import of a file, in every form the reader knows (test/helpers/importsOf.ts),
 * resolved to a path from `root`. Package imports (`node:fs`, `zod`) are left out; a computed
 * specifier is kept with `to` undefined, so it can be refused rather than slip through.
 */
async function importsOf(root: string, file: string): Promise<Import[]> {
  const text = await readFile(join(root, file), 'utf8');
  return importsIn(file, text)
    .filter((spec) => spec.specifier === undefined || spec.specifier.startsWith('.'))
    .map((spec) => ({
      from: file,
      to:
        spec.specifier === undefined
          ? undefined
          : relative(root, resolve(dirname(join(root, file)), spec.specifier)).replace(/\.js$/, '.ts'),
      form: spec.form,
      line: spec.line,
    }));
}

async function tsFiles(root: string, dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** `src/worker/deliverRecord.ts` -> `worker`, `src/services.ts` -> `services`, `jobs/x.ts` -> `jobs`; undefined outside src/ and jobs/. */
function areaOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] === 'jobs') return 'jobs';
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  return parts.length > 2 ? parts[1] : parts[1]!.replace(/\.ts$/, '');
}

/**
 * What STYLE.md forbids beyond the ranks: areas that never import each other, in either direction
 * (ranks alone would let the higher one import the lower).
 */
const NEVER_EACH_OTHER: readonly (readonly [string, string])[] = [['ingest', 'delivery']];

/** The one area of src/ that may import jobs/ (README, Design: the worker assembly builds the processors' effects). */
const IMPORTS_JOBS = 'assembly';

/** Every way an import breaks the design, each as `from:line -> to (form, why)`. */
interface Findings {
  /** An import to a higher rank or a sibling of the same rank. */
  upward: string[];
  /** Areas no rank names. */
  unranked: string[];
  /** An import between two areas that never import each other. */
  forbidden: string[];
  /** src/ importing jobs/ outside the worker assembly. */
  intoJobs: string[];
  /** A computed specifier (a template with `${...}`, a variable): it cannot be checked, so it is refused. */
  computed: string[];
  /** A relative import whose file is not there: the reader resolved it wrongly, or the import is broken. */
  unresolved: string[];
}

function judge(imports: readonly Import[], exists: (file: string) => boolean): Findings {
  const rank = new Map(RANKS.flatMap((areas, i) => areas.map((area) => [area, i] as const)));
  const never = new Set(NEVER_EACH_OTHER.flatMap(([a, b]) => [`${a}>${b}`, `${b}>${a}`]));
  const findings: Findings = { upward: [], unranked: [], forbidden: [], intoJobs: [], computed: [], unresolved: [] };
  const unranked = new Set<string>();
  for (const { from, to, form, line } of imports) {
    const where = `${from}:${line}`;
    if (to === undefined) {
      findings.computed.push(`${where} (${form} of a computed specifier)`);
      continue;
    }
    if (!exists(to)) findings.unresolved.push(`${where} -> ${to} (${form})`);
    const a = areaOf(from);
    const b = areaOf(to);
    if (a === undefined || b === undefined || a === b) continue;
    const ra = rank.get(a);
    const rb = rank.get(b);
    if (ra === undefined) unranked.add(a);
    if (rb === undefined) unranked.add(b);
    if (ra !== undefined && rb !== undefined && rb >= ra)
      findings.upward.push(`${where} -> ${to} (${form}; ${a} ${ra} -> ${b} ${rb})`);
    if (never.has(`${a}>${b}`))
      findings.forbidden.push(`${where} -> ${to} (${form}; ${a} and ${b} never import each other)`);
    if (b === 'jobs' && a !== IMPORTS_JOBS && from.startsWith('src/'))
      findings.intoJobs.push(`${where} -> ${to} (${form}; only src/${IMPORTS_JOBS} imports jobs/)`);
  }
  findings.unranked = [...unranked].sort();
  return findings;
}

/** Every import of src/ and jobs/ under `root`, judged. */
async function checkTree(root: string): Promise<Findings> {
  const imports: Import[] = [];
  for (const file of [...(await tsFiles(root, 'src')), ...(await tsFiles(root, 'jobs'))])
    imports.push(...(await importsOf(root, file)));
  return judge(imports, (file) => existsSync(join(root, file)));
}

/** A command is `xxx.ts` (declares flags) plus, when its code is heavy, `xxxRun.ts` (loaded lazily by its action). */
function commandOf(file: string): string {
  return file.replace(/Run\.ts$/, '.ts');
}

describe('the dependency direction (README, Design)', () => {
  it('every import of src/ and jobs/ points to its own area or a lower rank, and breaks no rule of STYLE.md', async () => {
    const findings = await checkTree(projectRoot);
    expect(findings).toEqual({ upward: [], unranked: [], forbidden: [], intoJobs: [], computed: [], unresolved: [] });
  });

  it('the rank check refuses an upward import and one between siblings of a rank', () => {
    const at = (from: string, to: string): Import => ({ from, to, form: 'import', line: 1 });
    const { upward } = judge(
      [
        at('src/kinds/orders.ts', 'src/worker/deliverRecord.ts'), // kinds below worker: upward
        at('src/watch/dropFolder.ts', 'src/schedule/scheduleStore.ts'), // siblings of one rank
        at('src/worker/deliverRecord.ts', 'src/kinds/recordWording.ts'), // downward: allowed
        at('src/services/queueStatus.ts', 'src/services.ts'), // one area: allowed
      ],
      () => true,
    );
    expect(upward).toEqual([
      'src/kinds/orders.ts:1 -> src/worker/deliverRecord.ts (import; kinds 7 -> worker 9)',
      'src/watch/dropFolder.ts:1 -> src/schedule/scheduleStore.ts (import; watch 13 -> schedule 13)',
    ]);
  });

  it('the reader sees every import form: a fixture tree with one of each, all refused', async () => {
    const root = await mkdtemp(join(tmpdir(), 'bulkorder-imports-'));
    try {
      const files: Record<string, string> = {
        'src/ingest/rows.ts': 'export const rows = 1;\n',
        'src/ingest/more.ts': 'export const more = 1;\n',
        'src/worker/verdict.ts': 'export const verdict = 1;\n',
        'jobs/processor.ts': 'export const processor = 1;\n',
        // delivery sits above ingest: ranks alone allow these, STYLE.md does not.
        'src/delivery/forms.ts': [
          "import { rows } from '../ingest/rows.js';",
          'import { more } from "../ingest/more.js";',
          "import type { rows as r } from '../ingest/rows.js';",
          "export { rows as again } from '../ingest/rows.js';",
          'export * from "../ingest/more.js";',
          "const lazy = await import('../ingest/rows.js');",
          'const lazier = await import(`../ingest/more.js`);',
          "type T = typeof import('../ingest/rows.js');",
          "import old = require('../ingest/more.js');",
          "import { createRequire } from 'node:module';",
          'const load = createRequire(import.meta.url);',
          "const cjs = load('../ingest/rows.js');",
          'const plain = require(`../ingest/more.js`);',
          "const thread = new URL(process.env.X ? '../ingest/rows.ts' : '../ingest/more.js', import.meta.url);",
          '',
        ].join('\n'),
        // Upward (ingest is below worker), computed, broken, and src/ importing jobs/.
        'src/ingest/up.ts': [
          "import { verdict } from '../worker/verdict.js';",
          'const name = "verdict";',
          'const computed = await import(`../worker/${name}.js`);',
          "import { gone } from './gone.js';",
          "import { processor } from '../../jobs/processor.js';",
          '',
        ].join('\n'),
      };
      for (const [file, text] of Object.entries(files)) {
        await mkdir(join(root, dirname(file)), { recursive: true });
        await writeFile(join(root, file), text);
      }
      const findings = await checkTree(root);
      expect(findings.forbidden.map((f) => /\(([^;]+);/.exec(f)?.[1])).toEqual([
        'import',
        'import',
        'import',
        'export from',
        'export from',
        'import()',
        'import()',
        'import() type',
        'import = require()',
        'load()',
        'require()',
        'new URL(import.meta.url)',
        'new URL(import.meta.url)',
      ]);
      expect(findings.forbidden.map((f) => f.split(' ')[0])).toEqual(
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 14].map((line) => `src/delivery/forms.ts:${line}`),
      );
      expect(findings.upward).toEqual([
        'src/ingest/up.ts:1 -> src/worker/verdict.ts (import; ingest 4 -> worker 9)',
        'src/ingest/up.ts:5 -> jobs/processor.ts (import; ingest 4 -> jobs 16)',
      ]);
      expect(findings.intoJobs).toEqual([
        'src/ingest/up.ts:5 -> jobs/processor.ts (import; only src/assembly imports jobs/)',
      ]);
      expect(findings.computed).toEqual(['src/ingest/up.ts:3 (import() of a computed specifier)']);
      expect(findings.unresolved).toEqual(['src/ingest/up.ts:4 -> src/ingest/gone.ts (import)']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
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

  it('no command module imports another command module; options.ts and parkedRun.ts (what dead-letters and review share) are the only shared ones and import no command', async () => {
    const shared = new Set(['src/commands/options.ts', 'src/commands/parkedRun.ts']);
    const offending: string[] = [];
    for (const file of await tsFiles(projectRoot, 'src/commands')) {
      if (file === 'src/commands/index.ts') continue; // the one list that wires every command in
      for (const { to } of await importsOf(projectRoot, file)) {
        if (to === undefined || !to.startsWith('src/commands/') || shared.has(to)) continue;
        if (!shared.has(file) && commandOf(to) === commandOf(file)) continue; // a command's own lazily loaded half
        offending.push(`${file} -> ${to}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
