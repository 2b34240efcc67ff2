/**
 * Issue 25: where the seconds of one whole file go. The run of bench/fileBench.ts (a `bulkorder
 * worker` already running with concurrency 100, then `bulkorder import <file> --wait`, the simulator
 * at 20 ms), with bench/lib/timelineHook.ts preloaded into the worker and the import: every Redis
 * command each sends, every POST and its answer, the files written, and the exit, on one clock.
 * Prints the phases of the import from its start (spawn) to its exit in milliseconds, and the POSTs
 * per 100 ms (the chunk waves); with several runs, each phase's median too.
 *
 *   node dist/bench/timeline.js [rows=7000] [runs=3] [concurrency=100] [ordersPerJob=the default]
 *   BENCH_TIMELINE_PROFILE=/tmp/prof node dist/bench/timeline.js 7000 1     (+ a CPU profile of each process)
 */
import { realpathSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { ORDERS_QUEUE } from '../src/queues.js';
import { benchScript, cliEntry, startNode, type StartedChild } from './lib/nodeChild.js';
import { forgetImports, orderFile } from './lib/benchData.js';
import { startBenchRedis, type BenchRedis } from './lib/benchRedis.js';
import { load, median } from './lib/benchStats.js';
import { knownScripts, type ScriptNames } from './lib/commandMonitor.js';
import { benchEnv, benchPrefix, DEFAULT_ORDERS_PER_JOB } from './importBench.js';
import { startSimulatorProcess, type SimulatorProcess } from './deliveryBench.js';

interface Event {
  t: number;
  pid: number;
  ev: string;
  cmd?: string;
  arg?: string;
  key?: string;
  what?: string;
  path?: string;
  cpuMs?: number;
}

export interface Timeline {
  /** Phase name -> milliseconds from the import's spawn to its end. */
  marks: [string, number][];
  /** POSTs started per 100 ms from the spawn. */
  waves: number[];
  orders: number;
  wallMs: number;
  /** CPU ms (user + system) of the import process and of the worker over its whole life. */
  importCpuMs: number;
  workerCpuMs: number;
  /** ms from the spawn of each token request the worker made. */
  tokens: number[];
}

async function run(
  redis: BenchRedis,
  sim: SimulatorProcess,
  file: string,
  names: ScriptNames,
  concurrency: number,
  ordersPerJob: number,
): Promise<Timeline> {
  await redis.reset();
  await sim.reset();
  const env = benchEnv(redis.url, {
    BULKORDER_BASE_URL: sim.url,
    BULKORDER_CONCURRENCY: String(concurrency),
    BULKORDER_ORDERS_PER_JOB: String(ordersPerJob),
  });
  const prefix = benchPrefix(env);
  const connection = redis.client.duplicate();
  const queue = new Queue(ORDERS_QUEUE, { connection, prefix });
  const out = join(tmpdir(), `bench-timeline-${process.pid}`);
  const results = `${out}.results.csv`;
  const rejects = `${out}.rejects.csv`;
  const workerLog = `${out}.worker.jsonl`;
  const importLog = `${out}.import.jsonl`;
  const hook = ['--import', benchScript('lib/timelineHook')];
  // BENCH_TIMELINE_PROFILE=<dir>: both processes also write a CPU profile there (node --cpu-prof).
  const profileDir = process.env.BENCH_TIMELINE_PROFILE;
  if (profileDir !== undefined && profileDir !== '') hook.push('--cpu-prof', '--cpu-prof-dir', profileDir);
  let worker: StartedChild | undefined;
  try {
    worker = await startNode(
      cliEntry,
      ['worker', '--processes', '1'],
      { ...env, BENCH_TIMELINE_FILE: workerLog },
      hook,
    );
    while ((await queue.getWorkersCount()) < 1) {
      if (worker.child.exitCode !== null) throw new Error(`the worker exited:\n${worker.stderr().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await forgetImports(file);
    const spawned = performance.timeOrigin + performance.now();
    const imported = await (
      await startNode(
        cliEntry,
        ['import', file, '--wait', '--results', results, '--rejects', rejects],
        { ...env, BENCH_TIMELINE_FILE: importLog },
        hook,
      )
    ).done;
    if (imported.code !== 0 && imported.code !== 4)
      throw new Error(`import exited ${imported.code}:\n${imported.stderr.slice(-3000)}`);
    worker.child.kill('SIGTERM');
    await worker.done;
    worker = undefined;
    const counters = await sim.counters();
    if (counters.duplicateOrdersAccepted > 0) throw new Error('duplicates');
    const events = async (path: string): Promise<Event[]> =>
      (await readFile(path, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Event);
    const timeline = phases(spawned, await events(importLog), await events(workerLog), names, results);
    return { ...timeline, orders: counters.ordersAccepted, wallMs: imported.wallMs };
  } finally {
    worker?.child.kill('SIGTERM');
    await worker?.done;
    await queue.close();
    connection.disconnect();
    for (const path of [results, rejects, workerLog, importLog]) await rm(path, { force: true });
  }
}

/** The marks of one run from both processes' events, in ms from the import's spawn. */
function phases(
  spawned: number,
  imp: Event[],
  wrk: Event[],
  names: ScriptNames,
  results: string,
): Omit<Timeline, 'orders' | 'wallMs'> {
  const script = (e: Event): string | undefined =>
    e.ev === 'redis' && (e.cmd === 'EVALSHA' || e.cmd === 'EVAL') ? (names.get(e.arg ?? '') ?? e.arg) : undefined;
  const at = (e: Event | undefined): number => (e === undefined ? Number.NaN : e.t - spawned);
  const first = (list: Event[], test: (e: Event) => boolean): Event | undefined => list.find(test);
  const last = (list: Event[], test: (e: Event) => boolean): Event | undefined => list.findLast(test);
  const isScript = (name: RegExp) => (e: Event) => name.test(script(e) ?? '');
  const batchRead = (e: Event) => e.ev === 'redis' && e.cmd === 'HGETALL' && /:batch:/.test(e.arg ?? '');
  const reserve = isScript(/^bulkorderReserve/);
  const confirm = isScript(/^bulkorderConfirm/);
  const addBulk = (e: Event) => e.ev === 'redis' && isScript(/^addStandardJob|^addJob/)(e);
  const posts = wrk.filter((e) => e.ev === 'post' && /^POST /.test(e.what ?? '') && !/token/.test(e.what ?? ''));
  const answers = wrk.filter((e) => e.ev === 'answer' && /^POST /.test(e.what ?? '') && !/token/.test(e.what ?? ''));
  const firstAdd = first(imp, addBulk);
  const afterFirstAdd = wrk.filter((e) => firstAdd !== undefined && e.t >= firstAdd.t);
  const lastSettle = last(wrk, isScript(/^bulkorderSettle/));
  const resultsOpen = first(imp, (e) => e.ev === 'write' && (e.path ?? '').startsWith(results.replace(/\.csv$/, '')));
  const noticed = resultsOpen === undefined ? undefined : last(imp, (e) => batchRead(e) && e.t < resultsOpen.t);
  const marks: [string, number][] = [
    ['node bootstrap done (the hook loaded)', at(first(imp, (e) => e.ev === 'hook'))],
    ['first Redis command (modules loaded, config read)', at(first(imp, (e) => e.ev === 'redis'))],
    ['first reserve (file read and validated)', at(first(imp, reserve))],
    ['first addBulk', at(firstAdd)],
    ['first job taken by the worker (moveToActive)', at(first(afterFirstAdd, isScript(/^moveToActive/)))],
    ['first POST', at(posts[0])],
    ['last confirm (reserve + enqueue done)', at(last(imp, confirm))],
    ['last POST', at(posts.at(-1))],
    ['last answer', at(answers.at(-1))],
    ['last settle (worker)', at(lastSettle)],
    ['follow loop reads the settled batch', at(noticed)],
    ['results file opened', at(resultsOpen)],
    [
      'results file closed',
      at(last(imp, (e) => e.ev === 'closed' && (e.path ?? '').startsWith(results.replace(/\.csv$/, '')))),
    ],
    ['exit event', at(last(imp, (e) => e.ev === 'exit'))],
  ];
  const waves: number[] = [];
  for (const post of posts) {
    const bin = Math.floor(at(post) / 100);
    while (waves.length <= bin) waves.push(0);
    waves[bin]!++;
  }
  const tokens = wrk.filter((e) => e.ev === 'post' && /token/.test(e.what ?? '') && e.t >= spawned).map(at);
  const cpu = (list: Event[]): number => last(list, (e) => e.ev === 'exit')?.cpuMs ?? Number.NaN;
  return { marks, waves, tokens, importCpuMs: cpu(imp), workerCpuMs: cpu(wrk) };
}

export async function timeline(rows: number, runs: number, concurrency = 100, ordersPerJob = 10): Promise<string> {
  const file = await orderFile(rows);
  const redis = await startBenchRedis();
  const sim = await startSimulatorProcess();
  const lines: string[] = [];
  try {
    const names = await knownScripts(redis.client, 'bench');
    const all: Timeline[] = [];
    for (let i = 0; i < runs; i++) {
      const loadNow = load();
      const t = await run(redis, sim, file, names, concurrency, ordersPerJob);
      all.push(t);
      lines.push(
        `run ${i + 1} (load ${loadNow}): ${t.orders} orders, import --wait ${Math.round(t.wallMs)} ms from spawn to exit`,
        `  CPU: import ${Math.round(t.importCpuMs)} ms, worker ${Math.round(t.workerCpuMs)} ms (its whole life); token requests at ${t.tokens.map(Math.round).join(', ')} ms`,
        `  POSTs per 100 ms: ${t.waves.join(' ')}`,
      );
    }
    lines.push(
      '',
      `| mark (ms from the import's spawn) | ${all.map((_, i) => `run ${i + 1}`).join(' | ')} | median | phase (median, ms) |`,
    );
    lines.push(`|---|${all.map(() => '---|').join('')}---|---|`);
    let previous = 0;
    for (const [m, [name]] of all[0]!.marks.entries()) {
      const values = all.map((t) => t.marks[m]![1]);
      const mid = median(values);
      lines.push(
        `| ${name} | ${values.map((v) => Math.round(v)).join(' | ')} | ${Math.round(mid)} | ${Math.round(mid - previous)} |`,
      );
      if (Number.isFinite(mid)) previous = mid;
    }
    const wall = median(all.map((t) => t.wallMs));
    lines.push(
      `| process gone (the parent sees the exit) | ${all.map((t) => Math.round(t.wallMs)).join(' | ')} | ${Math.round(wall)} | ${Math.round(wall - previous)} |`,
    );
    return lines.join('\n');
  } finally {
    sim.process.child.kill('SIGTERM');
    await sim.process.done;
    await redis.stop();
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [rows, runs, concurrency, perJob] = process.argv.slice(2).map(Number);
  process.stdout.write(
    (await timeline(rows || 7_000, runs || 3, concurrency || 100, perJob || DEFAULT_ORDERS_PER_JOB)) + '\n',
  );
}
