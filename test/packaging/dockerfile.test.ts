/**
 * The Dockerfile, run as a script (no Docker engine where the tests run): each stage gets a
 * folder of its own standing in for its file system, COPY copies from this checkout (or from an
 * earlier stage with --from), RUN runs in the stage's WORKDIR, and the last stage's ENTRYPOINT is
 * started. Run by `npm run test:packaging` (.ci/run), not `npm test`: it installs every dependency.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

interface Stage {
  name: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  entrypoint?: string[];
  cmd?: string[];
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): [string, string][] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [op, ...rest] = line.split(/\s+/);
      return [op!.toUpperCase(), rest.join(' ')];
    });
}

const scratch = mkdtempSync(join(tmpdir(), 'bulkorder-dockerfile-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs every step; returns the stages by name, the last one under 'final'. */
function build(): Map<string, Stage> {
  const stages = new Map<string, Stage>();
  let stage: Stage | undefined;
  const inStage = (s: Stage, path: string) => join(s.root, path.startsWith('/') ? path : join(s.workdir, path));
  for (const [op, args] of instructions(readFileSync(join(projectRoot, 'Dockerfile'), 'utf8'))) {
    if (op === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? 'final';
      expect(args).toMatch(/^node:20-slim\b/);
      stage = { name, root: join(scratch, name), workdir: '/', env: {} };
      mkdirSync(stage.root, { recursive: true });
      stages.set(name, stage);
      continue;
    }
    if (stage === undefined) throw new Error(`${op} before FROM`);
    if (op === 'WORKDIR') {
      stage.workdir = args;
      mkdirSync(join(stage.root, args), { recursive: true });
    } else if (op === 'ENV') {
      const [key, value] = args.split('=');
      stage.env[key!] = value!;
    } else if (op === 'COPY') {
      const parts = args.split(/\s+/);
      const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
      const paths = parts.filter((p) => !p.startsWith('--'));
      const dest = paths.pop()!;
      for (const source of paths) {
        const origin = from === undefined ? join(projectRoot, source) : inStage(stages.get(from)!, source);
        const target = dest.endsWith('/') ? join(inStage(stage, dest), source.split('/').pop()!) : inStage(stage, dest);
        cpSync(origin, target, { recursive: true });
      }
    } else if (op === 'RUN') {
      const run = spawnSync('sh', ['-c', args], {
        cwd: join(stage.root, stage.workdir),
        env: { ...process.env, ...stage.env },
        encoding: 'utf8',
      });
      expect(run.status, `RUN ${args}\n${run.stdout}\n${run.stderr}`).toBe(0);
    } else if (op === 'USER') {
      stage.user = args;
    } else if (op === 'ENTRYPOINT') {
      stage.entrypoint = JSON.parse(args) as string[];
    } else if (op === 'CMD') {
      stage.cmd = JSON.parse(args) as string[];
    } else {
      throw new Error(
        `this test does not know ${op}: teach it, or keep the Dockerfile to FROM/WORKDIR/ENV/COPY/RUN/USER/ENTRYPOINT/CMD`,
      );
    }
  }
  return stages;
}

describe('the Dockerfile, run as a script', () => {
  it(
    'builds a production image that runs `bulkorder` as a non-root user with production dependencies only',
    { timeout: 600_000 },
    () => {
      const stages = build();
      const final = stages.get('final')!;
      expect(final.user).toBe('node');
      expect(final.entrypoint?.[0]).toBe('node');
      const app = join(final.root, final.workdir);
      // Production dependencies only: the compiler and the test runner stayed in the build stage.
      expect(existsSync(join(app, 'node_modules/bullmq'))).toBe(true);
      expect(existsSync(join(app, 'node_modules/typescript'))).toBe(false);
      expect(existsSync(join(app, 'node_modules/vitest'))).toBe(false);
      expect(existsSync(join(app, 'src'))).toBe(false);
      const entry = final.entrypoint!.map((part) => (part.startsWith('/') ? join(final.root, part) : part));
      const start = (args: string[]) =>
        spawnSync(entry[0]!, [...entry.slice(1), ...args], {
          cwd: app,
          env: { ...process.env, ...final.env },
          encoding: 'utf8',
        });
      // The code cache the build made (src/bin/compileCache.ts), used as it is: the image's user may not write
      // dist/, and one made again would be renamed into place (a new inode).
      const caches = readdirSync(join(app, 'dist/bin')).filter((name) => name.endsWith('.cache'));
      expect(caches).toHaveLength(1);
      const cacheInode = statSync(join(app, 'dist/bin', caches[0]!)).ino;
      const help = start(final.cmd ?? []);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/Usage: bulkorder/);
      // A command that loads the ingest path (zod, csv-parse, libphonenumber) from the image's own files.
      const validate = start(['validate', 'samples/gift-orders.csv']);
      expect(validate.status, validate.stdout + validate.stderr).toBe(0);
      expect(readdirSync(join(app, 'dist/bin')).filter((name) => name.endsWith('.cache'))).toEqual(caches);
      expect(statSync(join(app, 'dist/bin', caches[0]!)).ino).toBe(cacheInode);
      // Every Lua script, loaded from the image's dist/ (tsc copies no .lua; build:dist does).
      const lua = spawnSync(
        'node',
        [
          '--input-type=module',
          '-e',
          "const m = await import('./dist/src/lua/loadScripts.js'); console.log(m.luaDir, m.loadScripts().length)",
        ],
        { cwd: app, encoding: 'utf8' },
      );
      expect(lua.stdout.trim(), lua.stderr).toBe(
        `${join(app, 'dist/src/lua')} ${readdirSync(join(projectRoot, 'src/lua/scripts')).length}`,
      );
      // And beside the bundled command, the entry point, which reads them from there.
      expect(readdirSync(join(app, 'dist/bin/scripts')).sort()).toEqual(
        readdirSync(join(projectRoot, 'src/lua/scripts')).sort(),
      );
    },
  );
});
