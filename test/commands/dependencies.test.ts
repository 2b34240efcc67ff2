import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

/** Every relative import (static, `import type`, re-export or dynamic `import('...')`) of a file, resolved to a path from the project root. */
async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(join(projectRoot, file), 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.map((spec) => relative(projectRoot, resolve(dirname(join(projectRoot, file)), spec)).replace(/\.js$/, '.ts'));
}

async function tsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(projectRoot, dir), { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => relative(projectRoot, join(e.parentPath, e.name)));
}

/** A command is `xxx.ts` (declares flags) plus, when its code is heavy, `xxxRun.ts` (loaded lazily by its action). */
function commandOf(file: string): string {
  return file.replace(/Run\.ts$/, '.ts');
}

describe('the dependency direction (README, Design)', () => {
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

  it('src/ imports jobs/ only from the worker assembly, and jobs/ imports no command', async () => {
    const assembly = ['src/worker/deliveryWorker.ts', 'src/worker/startWorkers.ts'];
    const offending: string[] = [];
    for (const file of await tsFiles('src')) {
      for (const target of await importsOf(file)) if (target.startsWith('jobs/') && !assembly.includes(file)) offending.push(`${file} -> ${target}`);
    }
    for (const file of await tsFiles('jobs')) {
      for (const target of await importsOf(file)) if (target.startsWith('src/commands/') || target.startsWith('src/worker/start')) offending.push(`${file} -> ${target}`);
    }
    expect(offending).toEqual([]);
  });

  it('the base layer (config.ts) imports nothing from worker/, delivery/ or commands/', async () => {
    const targets = await importsOf('src/config.ts');
    expect(targets.filter((t) => /^src\/(worker|delivery|commands|jobs)\//.test(t))).toEqual([]);
  });
});
