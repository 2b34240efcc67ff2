/**
 * The command as it is installed: package.json's bin is src/cli.ts bundled by esbuild.config.js
 * (dist/bin/), not the sources every other test runs. Built here from the current sources into a
 * folder of its own under dist/ (it finds package.json above it, as dist/bin/ does), then run as a
 * user runs it: its answers beside the sources' answers, its Lua scripts and its ingest thread
 * loaded from beside it, a whole import delivered by bundled worker processes exactly once, and the dashboard
 * and bull-board's page with its assets.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, samplesDir } from '../../src/paths.js';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { deliveryRig, HEADER, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';

const outdir = join(projectRoot, 'dist', `bin-test-${process.pid}-${randomBytes(3).toString('hex')}`);
let rig: DeliveryRig | undefined;

beforeAll(() => {
  mkdirSync(join(projectRoot, 'dist'), { recursive: true });
  const built = spawnSync(process.execPath, ['esbuild.config.js', outdir], { cwd: projectRoot, encoding: 'utf8' });
  expect(built.status, built.stdout + built.stderr).toBe(0);
}, 120_000);

afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

interface Ran {
  code: number | string;
  stdout: string;
  output: string;
}

/** Starts the bundled command (killed after each test by killAllCli). */
function startBundled(args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []): CliProcess {
  return startCli(args, { LOG_LEVEL: 'warn', ...env }, nodeFlags, { script: join(outdir, 'bulkorder.js') });
}

/** Runs the bundled command to its end. */
async function bundled(args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<Ran> {
  const cli = startBundled(args, env, nodeFlags);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), output: cli.output() };
}

/** The same command line run from the sources (tsx), as every other test runs it. */
async function fromSources(args: string[]): Promise<Ran> {
  const cli = startCli(args, { LOG_LEVEL: 'warn' });
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), output: cli.output() };
}

describe('the bundled command (dist/bin/, package.json bin)', () => {
  it('answers as the sources do: version, help, a valid file, rejected rows (exit 4), a refused file (exit 3)', async () => {
    const version = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string })
      .version;
    const lines = [
      ['--help'],
      ['validate', join(samplesDir, 'multi-line-orders.csv')],
      ['validate', join(samplesDir, 'mistakes.csv'), '--json'],
      ['validate', join(samplesDir, 'excel-ansi-windows-1252.csv')],
    ];
    const [versionRun, ...ours] = await Promise.all([bundled(['--version']), ...lines.map((l) => bundled(l))]);
    const theirs = await Promise.all(lines.map((l) => fromSources(l)));
    expect(versionRun.stdout.trim()).toBe(version);
    expect(ours.map((r) => r.code)).toEqual([0, 0, 4, 3]);
    expect(ours.map((r) => r.code)).toEqual(theirs.map((r) => r.code));
    expect(ours.map((r) => r.stdout)).toEqual(theirs.map((r) => r.stdout));
  }, 180_000);

  it('runs as a shell runs the bin npm links (by its #! line, through a symlink elsewhere), and as node runs the bundle itself', () => {
    const version = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string })
      .version;
    const link = join(outdir, 'links', 'bulkorder');
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(outdir, 'bulkorder.js'), link);
    const ran = spawnSync(link, ['--version'], { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'warn' } });
    expect([ran.status, ran.stdout.trim()], ran.stderr).toEqual([0, version]);
    // The bundle run by node itself, without its launcher: the command line is run once, not twice.
    const direct = spawnSync(process.execPath, [join(outdir, 'bulkorder.cjs'), '--version'], { encoding: 'utf8' });
    expect([direct.status, direct.stdout], direct.stderr).toEqual([0, `${version}\n`]);
  });

  const ORDERS = 5000;
  it('validates a spread file in an ingest thread loaded from beside it, as without threads', async () => {
    rig = await deliveryRig('bundled-threads');
    // Each order's second line 5,000 rows after its first, over 1 MiB: the file is spilled (src/ingest/
    // openRecordSource.ts), its rows validated in a thread with --threads 1 (none start by default below 4 cores).
    const first = Array.from({ length: ORDERS }, (_, i) => orderRow(`BT-${i}`, 5001));
    const second = Array.from({ length: ORDERS }, (_, i) => orderRow(`BT-${i}`, 5002));
    const file = await rig.writeFile('spread.csv', [HEADER, ...first, ...second].join('\n') + '\n');
    expect(statSync(file).size).toBeGreaterThan(1024 * 1024);
    const [threaded, inline] = await Promise.all([
      bundled(['validate', file, '--threads', '1', '--json']),
      bundled(['validate', file, '--threads', '0', '--json']),
    ]);
    expect(threaded.code, threaded.output).toBe(0);
    expect(JSON.parse(threaded.stdout)).toMatchObject({ orders: ORDERS });
    expect(threaded.stdout).toBe(inline.stdout);
  }, 180_000);

  it('bundled workers (two processes forked from the bundle) deliver a bundled import --wait: every order once, its results file whole', async () => {
    rig = await deliveryRig('bundled-import');
    const file = await rig.writeFile('orders.csv', ordersCsv('BI', 60));
    const results = join(rig.dir, 'orders.results.csv');
    // The supervisor forks its children from process.argv[1]: the bundle itself.
    const worker = startBundled(['worker', '--processes', '2'], rig.env);
    const queue = rig.services.queue;
    await waitFor(async () => (await queue.getWorkersCount()) === 2, 'two worker processes', 60_000);
    const sim = rig.simulator;
    const imported = await bundled(['import', file, '--wait', '--results', results], rig.env);
    expect(imported.code, imported.output).toBe(0);
    await waitFor(() => sim.counters().ordersAccepted >= 60, 'the 60 orders at the API', 60_000);
    expect(sim.counters()).toMatchObject({ ordersAccepted: 60, duplicateOrdersAccepted: 0 });
    const rows = readFileSync(results, 'utf8').trim().split('\n');
    expect(rows).toHaveLength(61);
    expect(rows.slice(1).every((row) => row.includes('delivered'))).toBe(true);
    worker.child.kill('SIGTERM');
    expect(await worker.exited, worker.output()).toBe(0);
  }, 180_000);

  it('serves the dashboard, and the bull-board page with its assets', async () => {
    rig = await deliveryRig('bundled-dashboard');
    const dashboard = startBundled(['dashboard', '--port', '0'], rig.env);
    const listening = /dashboard: (http:\/\/\S+)\//;
    await waitFor(() => listening.test(dashboard.output()), 'the dashboard to listen', 60_000);
    const url = listening.exec(dashboard.output())?.[1];
    const home = await fetch(`${url!}/`);
    expect(home.status).toBe(200);
    expect(await home.text()).toContain('<html');
    const queues = await (await fetch(`${url!}/queues`)).text();
    const assets = [...queues.matchAll(/src="([^"]+\.js)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    const statuses = await Promise.all(assets.map(async (a) => (await fetch(`${url!}/queues/${a}`)).status));
    expect(statuses.every((status) => status === 200)).toBe(true);
  }, 120_000);
});

describe('its code cache (src/bin/compileCache.ts)', () => {
  // NODE_OPTIONS emptied: V8 flags in it would make V8 refuse the cache the build made (and the launcher make another).
  const env = { NODE_OPTIONS: '' };
  const args = ['validate', join(samplesDir, 'mistakes.csv'), '--json'];
  const caches = (): string[] => readdirSync(outdir).filter((name) => name.endsWith('.cache'));
  /** The file's identity: a cache made again is renamed into place, a new inode. */
  const inode = (name: string): number => statSync(join(outdir, name)).ino;
  let expected: Ran;

  beforeAll(async () => {
    expected = await fromSources(args);
    expect(expected.code).toBe(4);
  }, 120_000);

  it('is made by the build and used as it is: a run answers as the sources do and leaves it in place', async () => {
    expect(caches()).toHaveLength(1);
    const [cache] = caches() as [string];
    const before = inode(cache);
    const run = await bundled(args, env);
    expect([run.code, run.stdout]).toEqual([4, expected.stdout]);
    // Refused by the checksum or by V8, it would have been made again under a new inode.
    expect(inode(cache)).toBe(before);
    expect(caches()).toEqual([cache]);
  }, 120_000);

  it('a damaged cache is not used: the command answers as the sources do and the cache is made again', async () => {
    const [cache] = caches() as [string];
    const bytes = readFileSync(join(outdir, cache));
    bytes.fill(0x5a, bytes.length / 2, bytes.length / 2 + 64); // damaged in the middle of its data, length kept
    writeFileSync(join(outdir, cache), bytes);
    const damaged = inode(cache);
    const run = await bundled(args, env);
    expect([run.code, run.stdout]).toEqual([4, expected.stdout]);
    expect(inode(cache)).not.toBe(damaged);
    expect(readFileSync(join(outdir, cache)).equals(bytes)).toBe(false);
    // The one made again is used by the next run, as it is.
    const remade = inode(cache);
    expect((await bundled(args, env)).code).toBe(4);
    expect(inode(cache)).toBe(remade);
  }, 120_000);

  it('other V8 flags get a cache of their own; where none can be written the command runs without it', async () => {
    const [cache] = caches() as [string];
    const before = inode(cache);
    const flagged = await bundled(args, env, ['--max-old-space-size=300']);
    expect([flagged.code, flagged.stdout]).toEqual([4, expected.stdout]);
    expect(caches()).toHaveLength(2);
    expect(inode(cache)).toBe(before);
    const [other] = caches().filter((name) => name !== cache) as [string];
    // A directory in the cache's place: the launcher's rename fails, as on a read-only install or a full disk.
    rmSync(join(outdir, other));
    mkdirSync(join(outdir, other));
    const unwritable = await bundled(args, env, ['--max-old-space-size=300']);
    expect([unwritable.code, unwritable.stdout, unwritable.output]).toEqual([4, expected.stdout, flagged.output]);
    expect(statSync(join(outdir, other)).isDirectory()).toBe(true);
    expect(readdirSync(outdir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 120_000);
});
