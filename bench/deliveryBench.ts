/**
 * Benchmarks #4-#7 (delivery side): orders queued by `bulkorder import`, then delivered by 1..n
 * `bulkorder worker` processes (the real CLI) to the simulator (its own process, 20 ms latency,
 * 5 s token lifetime), timed from the moment the queue is resumed until the batch record counts
 * every order settled in the ledger. Side by side in the same run: a bare undici loop posting
 * the same bodies to the same simulator at the same concurrency (bench/baselines/bareDelivery.ts).
 * At each concurrency the product runs once per BULKORDER_ORDERS_PER_JOB value (default 1 and 25:
 * one BullMQ job per order, the shape before issue 16's chunk jobs, and the default), each beside the same
 * bare run; the scaling and cluster runs use the last value.
 *
 *   node dist/bench/deliveryBench.js [orders=20000] [concurrency=50,200] [processes=1,2,4] [ordersPerJob=1,25]
 *   (BENCH_CLUSTER=0 leaves out the Redis Cluster run; BENCH_SCALING_CONCURRENCY=n runs the scaling runs at n per process)
 *
 * Bound by: at concurrency 50, the simulator's latency (50 / 20 ms = 2,500/s at most); above
 * that, the CPU of the worker process(es) and Redis, which share 2 cores with the simulator.
 */
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { BatchStore } from '../src/batches/batchStore.js';
import { keyspace } from '../src/keyspace.js';
import { ORDERS_QUEUE } from '../src/queues.js';
import type { SimulatorCounters } from '../src/simulator/index.js';
import {
  benchScript,
  cliEntry,
  profileFlags,
  runNode,
  startNode,
  waitForOutput,
  type StartedChild,
} from './lib/nodeChild.js';
import { forgetImports, orderFile } from './lib/benchData.js';
import { perOrder, startBenchRedis, type BenchRedis } from './lib/benchRedis.js';
import { load, mib, oursLabel, rate } from './lib/benchStats.js';
import { cpuSeconds, totalCpuSeconds } from './lib/cpuSeconds.js';
import { cpuPer1000, waitUntilSettled } from './lib/followDelivery.js';
import { benchEnv, benchPrefix, ORDERS_PER_JOB } from './importBench.js';
import { keyspaceBytes } from './lib/keyspaceBytes.js';
import { clusterRun } from './clusterDelivery.js';
import { knownScripts, monitorCommands } from './lib/commandMonitor.js';

/** The simulator's latency per request (ms); BENCH_LATENCY_MS sets another (e.g. 100: where the API, not the CPU, bounds a run). */
export const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
export const TOKEN_LIFETIME_S = 5;

export interface SimulatorProcess {
  url: string;
  process: StartedChild;
  counters(): Promise<SimulatorCounters>;
  reset(): Promise<void>;
}

export async function startSimulatorProcess(): Promise<SimulatorProcess> {
  const started = await startNode(benchScript('simulatorServer'), [String(LATENCY_MS), String(TOKEN_LIFETIME_S)]);
  const url = (await waitForOutput(started, /\{"url":"([^"]+)"\}/))[1]!;
  return {
    url,
    process: started,
    counters: async () => (await (await fetch(`${url}/__admin/counters`)).json()) as SimulatorCounters,
    reset: async () => void (await fetch(`${url}/__admin/reset`, { method: 'POST' })).arrayBuffer(),
  };
}

export interface DeliveryRun {
  concurrency: number;
  processes: number;
  /** The product's BULKORDER_ORDERS_PER_JOB (given to the import and the workers); absent for the bare loop. */
  ordersPerJob?: number;
  orders: number;
  seconds: number;
  ordersPerSecond: number;
  load: number;
  /** Token requests the simulator counted for the Business API, and duration / lifetime. */
  tokenRequests: number;
  tokenBudget: number;
  /** Orders not delivered (dead-lettered or held; for the bare loop: not answered 201). The benchmark expects 0. */
  notDelivered: number;
  /** Why, when notDelivered > 0: the workers' last log lines, or the bare loop's statuses. */
  logs?: string;
  commandsPerOrder?: string;
  /** Redis memory left per order once delivered (ledger entry, batch share, BullMQ's event stream). */
  residueBytesPerOrder?: number;
  /** Every ledger entry's MEMORY USAGE summed, per delivered order (one entry per order). */
  ledgerEntryBytes?: number;
  workerPeakRssBytes?: number;
  /** Every Redis command per delivered order (INFO commandstats delta / orders). */
  totalCommandsPerOrder?: number;
  /** With a breakdown: calls per command (INFO commandstats), and per caller and key shape (MONITOR). */
  calls?: Record<string, number>;
  callers?: [string, number][];
  /** CPU seconds per 1,000 delivered orders: the worker processes, Redis, and both together (bare loop: its own). */
  cpuPer1000?: { workers: number; redis: number; total: number };
  /**
   * The simulator's CPU seconds per 1,000 orders, and every process of the run together (workers or
   * the bare loop, Redis, the simulator) in cores kept busy on average: near the machine's cores, the
   * run is bound by CPU, not by the API's latency.
   */
  simulatorCpuPer1000?: number;
  coresBusy?: number;
}

export interface ProductRunOptions {
  concurrency: number;
  /** `bulkorder worker --processes 1` processes. */
  processes: number;
  /** BULKORDER_ORDERS_PER_JOB of the import (it makes the jobs) and the workers. */
  ordersPerJob: number;
  /** Charge every command of the delivery to its caller (bench/lib/commandMonitor.ts); default false. */
  breakdown?: boolean;
}

/** One product run: import (not timed), P paused workers, resume, time until settled. */
export async function productRun(
  redis: BenchRedis,
  sim: SimulatorProcess,
  file: string,
  options: ProductRunOptions,
): Promise<DeliveryRun> {
  const { concurrency, processes, ordersPerJob, breakdown = false } = options;
  await redis.reset();
  await sim.reset();
  const empty = await redis.usedMemory();
  // The import and the workers must name the same target (API URL and client id) and chunking: the same env.
  const env = benchEnv(redis.url, {
    BULKORDER_BASE_URL: sim.url,
    BULKORDER_CONCURRENCY: String(concurrency),
    BULKORDER_ORDERS_PER_JOB: String(ordersPerJob),
  });
  const prefix = benchPrefix(env);
  const connection = redis.client.duplicate();
  const queue = new Queue(ORDERS_QUEUE, { connection, prefix });
  const rejects = join(tmpdir(), `bench-delivery-${process.pid}.rejects.csv`);
  const workers: StartedChild[] = [];
  try {
    await queue.pause(); // workers start idle; the clock starts at resume
    await forgetImports(file);
    const imported = await runNode(cliEntry, ['import', file, '--rejects', rejects], env, [0, 4]);
    const batchId = /batch (b-\S+)/.exec(imported.stdout)?.[1];
    const queued = Number(/queued (\d+)/.exec(imported.stdout)?.[1] ?? 0);
    if (batchId === undefined || queued === 0) throw new Error(`import queued nothing:\n${imported.stdout}`);
    const profile = profileFlags(); // each worker process's CPU profile, with BENCH_PROFILE_DIR
    for (let i = 0; i < processes; i++)
      workers.push(await startNode(cliEntry, ['worker', '--processes', '1'], env, profile));
    while ((await queue.getWorkersCount()) < processes) await new Promise((r) => setTimeout(r, 50));
    const batches = new BatchStore(redis.client, keyspace(prefix), 24 * 60 * 60 * 1000);
    const loadNow = load();
    await redis.client.config('RESETSTAT');
    const monitor = breakdown
      ? await monitorCommands(redis.client, await knownScripts(redis.client, prefix), prefix)
      : undefined;
    const workerPids = workers.map((w) => w.child.pid ?? 0);
    const simPid = sim.process.child.pid ?? 0;
    const cpuBefore = {
      workers: await totalCpuSeconds(workerPids),
      redis: await cpuSeconds(redis.pid),
      simulator: await cpuSeconds(simPid),
    };
    let notDelivered = 0;
    let logs = '';
    const started = performance.now();
    await queue.resume();
    ({ notDelivered } = await waitUntilSettled(batches, batchId, queued, workers));
    // Reported, not thrown: a long run keeps its other figures; the smoke test asserts zero.
    if (notDelivered > 0)
      logs = workers
        .map((w) => w.stderr())
        .join('\n')
        .slice(-3000);
    const seconds = (performance.now() - started) / 1000;
    const workerCpu = (await totalCpuSeconds(workerPids)) - cpuBefore.workers;
    const redisCpu = (await cpuSeconds(redis.pid)) - cpuBefore.redis;
    const simulatorCpu = (await cpuSeconds(simPid)) - cpuBefore.simulator;
    const calls = await redis.commandCalls();
    const callers = await monitor?.stop();
    const counters = await sim.counters();
    for (const w of workers) w.child.kill('SIGTERM');
    const ended = await Promise.all(workers.map((w) => w.done));
    workers.length = 0;
    const residueBytesPerOrder = ((await redis.usedMemory()) - empty) / queued;
    const keys = await keyspaceBytes(redis.client, prefix, ORDERS_QUEUE);
    return {
      concurrency,
      processes,
      ordersPerJob,
      orders: queued,
      seconds,
      ordersPerSecond: queued / seconds,
      load: loadNow,
      tokenRequests: counters.tokenRequests.business,
      tokenBudget: seconds / TOKEN_LIFETIME_S,
      notDelivered,
      ...(logs === '' ? {} : { logs }),
      commandsPerOrder: perOrder(calls, queued),
      totalCommandsPerOrder: Object.values(calls).reduce((a, b) => a + b, 0) / queued,
      cpuPer1000: cpuPer1000(workerCpu, redisCpu, queued),
      simulatorCpuPer1000: (simulatorCpu / queued) * 1000,
      coresBusy: (workerCpu + redisCpu + simulatorCpu) / seconds,
      residueBytesPerOrder,
      ledgerEntryBytes: keys.ledgerEntries.bytes / queued,
      workerPeakRssBytes: Math.max(...ended.map((e) => e.peakRssBytes)),
      ...(callers === undefined ? {} : { calls, callers }),
    };
  } finally {
    for (const w of workers) w.child.kill('SIGKILL');
    await queue.close();
    connection.disconnect(); // BullMQ leaves a connection it was given open
    await rm(rejects, { force: true });
  }
}

async function bareRun(sim: SimulatorProcess, file: string, concurrency: number): Promise<DeliveryRun> {
  await sim.reset();
  const loadNow = load();
  const simPid = sim.process.child.pid ?? 0;
  const simulatorBefore = await cpuSeconds(simPid);
  const result = await runNode(benchScript('baselines/bareDelivery'), [sim.url, file, String(concurrency)]);
  const simulatorCpu = (await cpuSeconds(simPid)) - simulatorBefore;
  const {
    orders,
    seconds,
    cpuSeconds: loopCpu,
    failed,
    statuses,
  } = JSON.parse(result.stdout) as {
    orders: number;
    seconds: number;
    cpuSeconds: number;
    failed: number;
    statuses: Record<string, number>;
  };
  const counters = await sim.counters();
  return {
    concurrency,
    processes: 1,
    orders,
    seconds,
    ordersPerSecond: orders / seconds,
    load: loadNow,
    tokenRequests: counters.tokenRequests.business,
    tokenBudget: seconds / TOKEN_LIFETIME_S,
    notDelivered: failed,
    cpuPer1000: cpuPer1000(loopCpu, 0, orders),
    simulatorCpuPer1000: (simulatorCpu / orders) * 1000,
    // The simulator's CPU over the child's whole life (start and parse included): a little more than the timed loop's.
    coresBusy: (loopCpu + simulatorCpu) / seconds,
    ...(failed === 0 ? {} : { logs: `answers other than 201: ${JSON.stringify(statuses)}` }),
  };
}

export interface DeliveryFigures {
  /**
   * #4 and #6: per concurrency, then per orders-per-job value, ours (one worker process) and bare,
   * measured back to back; the pairs of one concurrency share one bare run.
   */
  pairs: { ours: DeliveryRun; bare: DeliveryRun; ratio: number }[];
  /** #5: the product with 1, 2, 4... processes at `scalingConcurrency` each, at the last orders-per-job value. */
  scaling: DeliveryRun[];
  /** The same delivery with one worker process on a local three-node Redis Cluster (bench/clusterDelivery.ts). */
  cluster?: DeliveryRun;
}

export interface DeliveryBenchOptions {
  orders: number;
  concurrencies: number[];
  processes: number[];
  /** BULKORDER_ORDERS_PER_JOB values, each run at every concurrency; default 1 and 25 (ORDERS_PER_JOB). */
  ordersPerJob?: readonly number[];
  /** Concurrency per process in the scaling runs; default the first of `concurrencies`. */
  scalingConcurrency?: number;
  redis?: BenchRedis;
  /** Also run on a Redis Cluster; default true. */
  cluster?: boolean;
}

export async function deliveryBench(options: DeliveryBenchOptions): Promise<DeliveryFigures> {
  // About 0.71 orders per row with the generator's 20% multi-line orders.
  const file = await orderFile(Math.round(options.orders * 1.4));
  const redis = options.redis ?? (await startBenchRedis());
  const sim = await startSimulatorProcess();
  const ordersPerJob = options.ordersPerJob ?? ORDERS_PER_JOB;
  if (ordersPerJob.length === 0) throw new Error('deliveryBench: no orders-per-job value to measure');
  const chosen = ordersPerJob[ordersPerJob.length - 1]!;
  try {
    const pairs: DeliveryFigures['pairs'] = [];
    // The simulator's first run meets its code cold (V8 not yet optimized): up to ~20% slower at
    // c=200 in round 17. A bare run discarded first, so the first product run does not pay for it.
    await bareRun(sim, file, options.concurrencies[0] ?? 50);
    for (const concurrency of options.concurrencies) {
      // The bare run after the first of ours, so a before/after pair brackets it in time.
      const ours = [await productRun(redis, sim, file, { concurrency, processes: 1, ordersPerJob: ordersPerJob[0]! })];
      const bare = await bareRun(sim, file, concurrency);
      for (const n of ordersPerJob.slice(1))
        ours.push(await productRun(redis, sim, file, { concurrency, processes: 1, ordersPerJob: n }));
      for (const run of ours) pairs.push({ ours: run, bare, ratio: run.ordersPerSecond / bare.ordersPerSecond });
    }
    const scaling: DeliveryRun[] = [];
    const perProcess = options.scalingConcurrency ?? options.concurrencies[0] ?? 50;
    for (const processes of options.processes) {
      const known = pairs.find(
        (p) => p.ours.concurrency === perProcess && p.ours.ordersPerJob === chosen && processes === 1,
      );
      scaling.push(
        known?.ours ??
          (await productRun(redis, sim, file, { concurrency: perProcess, processes, ordersPerJob: chosen })),
      );
    }
    const cluster =
      options.cluster === false
        ? undefined
        : await clusterRun(sim, file, { concurrency: perProcess, processes: 1, ordersPerJob: chosen });
    return { pairs, scaling, ...(cluster === undefined ? {} : { cluster }) };
  } finally {
    sim.process.child.kill('SIGTERM');
    await sim.process.done;
    await redis.reset();
    if (options.redis === undefined) await redis.stop();
  }
}

export function describeDelivery(f: DeliveryFigures): string {
  const run = (r: DeliveryRun): string =>
    `${rate(r.orders)} orders, c=${r.concurrency} x ${r.processes}${r.ordersPerJob === undefined ? '' : ` (${oursLabel(r.ordersPerJob)})`}: ${rate(r.ordersPerSecond)}/s (${r.seconds.toFixed(1)} s, load ${r.load}), tokens ${r.tokenRequests} (budget ${r.tokenBudget.toFixed(1)})` +
    (r.cpuPer1000 === undefined
      ? ''
      : `, CPU ${r.cpuPer1000.total.toFixed(2)} s/1k orders (workers ${r.cpuPer1000.workers.toFixed(2)}, Redis ${r.cpuPer1000.redis.toFixed(2)})`) +
    (r.coresBusy === undefined
      ? ''
      : `, simulator ${r.simulatorCpuPer1000?.toFixed(2)} s/1k, cores busy ${r.coresBusy.toFixed(2)}`) +
    (r.totalCommandsPerOrder === undefined ? '' : `, ${r.totalCommandsPerOrder.toFixed(1)} Redis commands/order`) +
    (r.notDelivered === 0 ? '' : `, NOT DELIVERED ${r.notDelivered}: ${r.logs ?? ''}`) +
    (r.commandsPerOrder === undefined
      ? ''
      : `, worker peak ${mib(r.workerPeakRssBytes ?? 0)}, ledger entry ${rate(r.ledgerEntryBytes ?? 0)} B, residue ${rate(r.residueBytesPerOrder ?? 0)} B/order, commands/order: ${r.commandsPerOrder}`);
  return [
    ...[...new Set(f.pairs.map((p) => p.ours.concurrency))].flatMap((c) => {
      const same = f.pairs.filter((p) => p.ours.concurrency === c);
      return [
        ...same.map((p) => `delivery ours  ${run(p.ours)}\n  ratio ${p.ratio.toFixed(2)}x`),
        `delivery bare  ${run(same[0]!.bare)}`,
      ];
    }),
    ...f.scaling.map((r) => `scaling ${run(r)}`),
    ...(f.cluster === undefined ? [] : [`cluster ${run(f.cluster)}`]),
  ].join('\n');
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const list = (text: string | undefined, fallback: number[]): number[] =>
    text === undefined ? fallback : text.split(',').map(Number);
  const figures = await deliveryBench({
    orders: Number(process.argv[2] ?? 20_000),
    concurrencies: list(process.argv[3], [50, 200]),
    processes: list(process.argv[4], [1, 2, 4]),
    ordersPerJob: list(process.argv[5], ORDERS_PER_JOB),
    cluster: process.env.BENCH_CLUSTER !== '0', // BENCH_CLUSTER=0: no Redis Cluster run
    // BENCH_SCALING_CONCURRENCY=100 with processes 1,2: two processes at 100 beside one bare loop at 200
    ...(process.env.BENCH_SCALING_CONCURRENCY === undefined
      ? {}
      : { scalingConcurrency: Number(process.env.BENCH_SCALING_CONCURRENCY) }),
  });
  process.stdout.write(describeDelivery(figures) + '\n');
}
