/**
 * The library as an application gets it: `npm pack`, the tarball installed into an empty project,
 * its types checked by the compiler, and README's "As a library" example run there against the
 * simulator, with a `bulkorder worker` from the same tarball delivering. Run by
 * `npm run test:packaging` (.ci/run), not `npm test`: it installs every dependency.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot, samplesDir } from '../../src/paths.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { deletePrefix, testRedis, TEST_REDIS_URL } from '../helpers/redis.js';

const scratch = mkdtempSync(join(tmpdir(), 'bulkorder-tarball-'));
const app = join(scratch, 'portal');
const prefix = `bulkorder-test-tarball-${randomBytes(4).toString('hex')}`;
const children: ChildProcess[] = [];
let simulator: Simulator | undefined;

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await simulator?.close();
  const redis = testRedis();
  await deletePrefix(redis, prefix);
  redis.disconnect();
  rmSync(scratch, { recursive: true, force: true });
});

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  expect(result.status, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** Starts a process and resolves with the first match of `ready` in what it writes. */
function startUntil(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  const child = spawn(process.execPath, args, {
    cwd: app,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match !== null) resolve({ child, match, output: () => output });
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${ready}: ${output}`)));
  });
}

describe('the packed tarball in an empty project', () => {
  it(
    'installs, type-checks an import of the library, and runs the README example against the simulator',
    { timeout: 600_000 },
    async () => {
      run('npm', ['pack', '--pack-destination', scratch, '--silent'], projectRoot);
      const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'));
      expect(tarball).toBeDefined();
      run('mkdir', ['-p', app], scratch);
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'portal', private: true, type: 'module' }));
      run('npm', ['install', join(scratch, tarball!), '--no-audit', '--no-fund', '--ignore-scripts'], app);

      // The declarations: an application's TypeScript sees the library's types.
      writeFileSync(
        join(app, 'check.ts'),
        `import { openBulkorder, validateFile, type StatusReport, type ValidateResult } from 'bulkorder';\n` +
          `const result: ValidateResult = await validateFile('orders.csv');\n` +
          `const status: StatusReport = await (await openBulkorder({} as never)).status();\n` +
          `export const counts: [number, number] = [result.summary.rejected, status.deadLetters];\n`,
      );
      const tsc = join(projectRoot, 'node_modules/typescript/bin/tsc');
      run(
        process.execPath,
        [
          tsc,
          '--noEmit',
          '--strict',
          '--skipLibCheck',
          '--target',
          'es2023',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--typeRoots',
          join(projectRoot, 'node_modules/@types'),
          '--types',
          'node',
          'check.ts',
        ],
        app,
      );

      simulator = await startSimulator({ seed: 3 });
      const env = {
        REDIS_URL: TEST_REDIS_URL,
        BULKORDER_REDIS_PREFIX: prefix,
        BULKORDER_BASE_URL: simulator.url,
        BULKORDER_USER_AGENT: 'Test-BulkorderTests',
        BULKORDER_CAFETARIAPLAN_CLIENT_ID: 'sim-cafetariaplan',
        BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'sim-cafetariaplan-secret',
        BULKORDER_WORKER_PROCESSES: '1',
        LOG_LEVEL: 'info',
      };
      const worker = await startUntil(
        // The package's bin: the bundled command (esbuild.config.js).
        [join(app, 'node_modules/bulkorder/dist/bin/bulkorder.js'), 'worker'],
        env,
        /delivery worker started/,
      );

      const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
      const example = /<!-- library-example -->\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(example, 'README.md has the library example after <!-- library-example -->').toBeDefined();
      writeFileSync(join(app, 'portal.mjs'), example!);
      const portal = await startUntil(
        ['portal.mjs', join(samplesDir, 'employees.csv')],
        { ...env, PORT: '0' },
        /portal listening on (\d+)/,
      );
      expect(portal.output()).toMatch(/employees: [1-9]\d* registered, \d+ rejected, settled: true/);

      const [, , email, , , , companyId] = /\n(([^,\n]+),([^,\n]+),([^,\n]+),([^,\n]+),([^,\n]+))/.exec(
        readFileSync(join(samplesDir, 'employees.csv'), 'utf8'),
      )!;
      const base = `http://127.0.0.1:${portal.match[1]}/login`;
      const redirect = await fetch(
        `${base}?email=${encodeURIComponent(email!)}&company=${encodeURIComponent(companyId!)}`,
        { redirect: 'manual' },
      );
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get('location')).toMatch(/^https?:\/\//);
      const unknown = await fetch(`${base}?email=nobody%40example.nl&company=${encodeURIComponent(companyId!)}`, {
        redirect: 'manual',
      });
      expect(unknown.status).toBe(404);
      expect(simulator.counters().logins).toBe(1);

      const ended = (child: ChildProcess) =>
        new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const portalEnded = ended(portal.child);
      portal.child.kill('SIGTERM');
      expect(await portalEnded).toBe(0);
      const workerEnded = ended(worker.child);
      worker.child.kill('SIGTERM');
      expect(await workerEnded).toBe(0);
    },
  );
});
