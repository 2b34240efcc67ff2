/**
 * The tiers (test/tiers.ts) as vitest sees them: `vitest list` puts every test file in exactly one
 * project, `faults` holding exactly the listed fault files; every listed file exists; and every
 * test that records a RELIABILITY.md row is among what `npm run reliability` runs.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { faultFiles, reliabilityFiles } from './tiers.js';

/** Every `*.test.ts` under test/, from the project root, except the suites with their own configs. */
async function testFiles(): Promise<string[]> {
  const all = await readdir(join(projectRoot, 'test'), { recursive: true });
  return all
    .map((name) => join('test', name))
    .filter((file) => file.endsWith('.test.ts'))
    .filter((file) => !file.startsWith('test/packaging/') && !file.startsWith('test/bench/'))
    .sort();
}

/** What `vitest list --filesOnly` says it would run: each file with its project. */
async function vitestList(): Promise<{ file: string; projectName: string }[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-tiers-'));
  try {
    const out = join(dir, 'list.json');
    await promisify(execFile)(
      process.execPath,
      [join(projectRoot, 'node_modules/vitest/vitest.mjs'), 'list', '--filesOnly', `--json=${out}`],
      { cwd: projectRoot },
    );
    const listed = JSON.parse(await readFile(out, 'utf8')) as { file: string; projectName: string }[];
    return listed.map((entry) => ({ ...entry, file: relative(projectRoot, entry.file) }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the test tiers', () => {
  it('each fault file exists and is listed once', () => {
    for (const file of faultFiles) expect(existsSync(join(projectRoot, file)), file).toBe(true);
    expect(new Set(faultFiles).size).toBe(faultFiles.length);
  });

  it('vitest runs every test file in exactly one tier: faults the listed ones, fast every other', async () => {
    const listed = await vitestList();
    const expected = (await testFiles()).map((file) => ({
      file,
      projectName: faultFiles.includes(file) ? 'faults' : 'fast',
    }));
    const byFile = (a: { file: string }, b: { file: string }) => a.file.localeCompare(b.file);
    expect(listed.sort(byFile)).toEqual(expected.sort(byFile));
  }, 60_000);

  it('npm run reliability runs every test that records a row, and each path it names exists', async () => {
    for (const path of reliabilityFiles) expect(existsSync(join(projectRoot, path)), path).toBe(true);
    const covered = (file: string) =>
      reliabilityFiles.some((path) => file === path || file.startsWith(path.endsWith('/') ? path : `${path}/`));
    const recording: string[] = [];
    for (const file of await testFiles()) {
      if ((await readFile(join(projectRoot, file), 'utf8')).match(/^import .*\/helpers\/reliabilityLog\.js';$/m))
        recording.push(file);
    }
    expect(recording.length).toBeGreaterThan(0);
    expect(recording.filter((file) => !covered(file))).toEqual([]);
  });
});
