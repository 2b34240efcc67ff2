/**
 * Benchmark #17: one whole file end to end, as a user runs it. Ours: `bulkorder worker` already
 * running (concurrency 100, one process), then `bulkorder import <file> --wait`, timed from its
 * start to its exit (parse, validate, reserve, queue, deliver, follow, results file). Side by side
 * in the same run: the script a user would write instead (bench/baselines/bareFile.ts: csv-parse,
 * the row schema, group by orderRef, an undici Pool at the same concurrency), timed the same way,
 * against the same simulator (its own process, 20 ms latency). Every order must be accepted once.
 * Ours runs once per BULKORDER_ORDERS_PER_JOB value (default 1 and 25: one BullMQ job per order, the
 * shape before issue 16's chunk jobs, and the default), given to the worker and the import alike.
 *
 *   node dist/bench/fileBench.js [rows=7000] [concurrency=100] [ordersPerJob=1,25]
 *
 * Bound by: the bare script by the API's latency (concurrency / 20 ms); ours by the CPU the worker,
 * the importer and Redis take per order on the cores they share with the simulator.
 */
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { ORDERS_QUEUE } from '../src/queues.js';
import { benchScript, cliEntry, profileFlags, runNode, startNode, type StartedChild } from './lib/nodeChild.js';
import { forgetImports, orderFile } from './lib/benchData.js';
import { startBenchRedis, type BenchRedis } from './lib/benchRedis.js';
import { load, mib, oursLabel, rate } from './lib/benchStats.js';
import { benchEnv, benchPrefix, ORDERS_PER_JOB } from './importBench.js';
import { startSimulatorProcess, type SimulatorProcess } from './deliveryBench.js';

export interface FileFigures {
  rows: number;
  concurrency: number;
  load: number;
  /** The last of `variants` (the product's default unless told otherwise). */
  ours: FileOurs;
  /** One run of ours per orders-per-job value, each beside the same bare run; ratio = its orders/s / bare's. */
  variants: { ours: FileOurs; ratio: number }[];
  bare: { orders: number; seconds: number; ordersPerSecond: number; cpuSeconds: number };
  /** ours / bare, orders per second (the same orders). */
  ratio: number;
}

export interface FileOurs {
  ordersPerJob: number;
  orders: number;
  seconds: number;
  ordersPerSecond: number;
  /** CPU-seconds of the `import --wait` process and of the worker process (from its start, idle wait included). */
  importCpuSeconds: number;
  workerCpuSeconds: number;
  importPeakRssBytes: number;
}

async function oursRun(
  redis: BenchRedis,
  sim: SimulatorProcess,
  file: string,
  concurrency: number,
  ordersPerJob: number,
): Promise<FileOurs> {
  await redis.reset();
  await sim.reset();
  // The import decides the chunking, the worker must agree: one env for both.
  const env = benchEnv(redis.url, {
    BULKORDER_BASE_URL: sim.url,
    BULKORDER_CONCURRENCY: String(concurrency),
    BULKORDER_ORDERS_PER_JOB: String(ordersPerJob),
  });
  const prefix = benchPrefix(env);
  const connection = redis.client.duplicate();
  const queue = new Queue(ORDERS_QUEUE, { connection, prefix });
  const results = join(tmpdir(), `bench-file-${process.pid}.results.csv`);
  const rejects = join(tmpdir(), `bench-file-${process.pid}.rejects.csv`);
  let worker: StartedChild | undefined;
  try {
    const profile = profileFlags(); // the worker's and the import's CPU profiles, with BENCH_PROFILE_DIR
    // A worker is always running in production: started, and ready, before the clock starts.
    worker = await startNode(cliEntry, ['worker', '--processes', '1'], env, profile);
    while ((await queue.getWorkersCount()) < 1) {
      if (worker.child.exitCode !== null) throw new Error(`the worker exited:\n${worker.stderr().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await forgetImports(file);
    const imported = await runNode(
      cliEntry,
      ['import', file, '--wait', '--results', results, '--rejects', rejects],
      env,
      [0, 4],
      profile,
    );
    const counters = await sim.counters();
    const orders = counters.ordersAccepted;
    if (counters.duplicateOrdersAccepted > 0 || imported.code !== 0) {
      throw new Error(
        `import --wait exited ${imported.code}, ${counters.duplicateOrdersAccepted} duplicates:\n${imported.stdout.slice(-2000)}\n${imported.stderr.slice(-2000)}`,
      );
    }
    const seconds = imported.wallMs / 1000;
    worker.child.kill('SIGTERM');
    const stopped = await worker.done;
    worker = undefined;
    return {
      ordersPerJob,
      orders,
      seconds,
      ordersPerSecond: orders / seconds,
      importCpuSeconds: imported.cpuSeconds,
      workerCpuSeconds: stopped.cpuSeconds,
      importPeakRssBytes: imported.peakRssBytes,
    };
  } finally {
    worker?.child.kill('SIGTERM');
    await worker?.done;
    await queue.close();
    connection.disconnect();
    await rm(results, { force: true });
    await rm(rejects, { force: true });
  }
}

async function bareRun(sim: SimulatorProcess, file: string, concurrency: number): Promise<FileFigures['bare']> {
  await sim.reset();
  const run = await runNode(benchScript('baselines/bareFile'), [sim.url, file, String(concurrency)]);
  const figures = JSON.parse(run.stdout) as { orders: number; failed: number; statuses: Record<string, number> };
  if (figures.failed > 0)
    throw new Error(`the bare script had ${figures.failed} orders refused: ${JSON.stringify(figures.statuses)}`);
  const seconds = run.wallMs / 1000;
  return { orders: figures.orders, seconds, ordersPerSecond: figures.orders / seconds, cpuSeconds: run.cpuSeconds };
}

export async function fileBench(
  rows: number,
  concurrency = 100,
  redisGiven?: BenchRedis,
  ordersPerJob: readonly number[] = ORDERS_PER_JOB,
): Promise<FileFigures> {
  if (ordersPerJob.length === 0) throw new Error('fileBench: no orders-per-job value to measure');
  const file = await orderFile(rows);
  const redis = redisGiven ?? (await startBenchRedis());
  const sim = await startSimulatorProcess();
  try {
    // The simulator's first run meets its code cold (V8 not yet optimized); a run discarded first,
    // so whichever side is measured first does not pay for it.
    await bareRun(sim, file, concurrency);
    const loadNow = load();
    // Alternated in one run, so both meet the same machine: bare, then ours once per value.
    const bare = await bareRun(sim, file, concurrency);
    const variants: FileFigures['variants'] = [];
    for (const n of ordersPerJob) {
      const ours = await oursRun(redis, sim, file, concurrency, n);
      if (ours.orders !== bare.orders)
        throw new Error(
          `ours (${oursLabel(n)}) delivered ${ours.orders} orders, the bare script ${bare.orders}: not the same file`,
        );
      variants.push({ ours, ratio: ours.ordersPerSecond / bare.ordersPerSecond });
    }
    const last = variants[variants.length - 1]!;
    return { rows, concurrency, load: loadNow, ours: last.ours, variants, bare, ratio: last.ratio };
  } finally {
    sim.process.child.kill('SIGTERM');
    await sim.process.done;
    if (redisGiven === undefined) await redis.stop();
  }
}

export function describeFile(f: FileFigures): string {
  return [
    `a whole file end to end, ${rate(f.ours.orders)} orders (${rate(f.rows)} rows), concurrency ${f.concurrency} (load ${f.load}):`,
    ...f.variants.map(
      ({ ours, ratio }) =>
        `  ${oursLabel(ours.ordersPerJob)} (worker + import --wait) ${ours.seconds.toFixed(1)} s, ${rate(ours.ordersPerSecond)} orders/s; ratio ${ratio.toFixed(2)}x; ` +
        `CPU import ${ours.importCpuSeconds.toFixed(2)} s + worker ${ours.workerCpuSeconds.toFixed(2)} s, import peak ${mib(ours.importPeakRssBytes)}`,
    ),
    `  bare script ${f.bare.seconds.toFixed(1)} s, ${rate(f.bare.ordersPerSecond)} orders/s, CPU ${f.bare.cpuSeconds.toFixed(2)} s`,
  ].join('\n');
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ordersPerJob = process.argv[4]?.split(',').map(Number) ?? ORDERS_PER_JOB;
  process.stdout.write(
    describeFile(
      await fileBench(Number(process.argv[2] ?? 7_000), Number(process.argv[3] ?? 100), undefined, ordersPerJob),
    ) + '\n',
  );
}
