/**
 * `npm run bench`: every benchmark of issue 7, each figure side by side with its bare baseline
 * in the same run, repeated `--runs` times (default 3); prints each run as it ends and then a
 * table of medians, and keeps the raw figures in bench/data/results-<time>.json.
 *
 *   npm run bench                          validate and import of 1M rows, delivery of 50k orders
 *   npm run bench:quick                    small sizes, one run (the CI smoke test)
 *   node dist/bench/run.js --only delivery --runs 1 --orders 20000 --rows 200000
 *   node dist/bench/run.js --only file --file-rows 7000      a 5,000-order file end to end (#17)
 *
 * Every process measured is its own (the real CLI, the baselines, the simulator), and Redis is
 * a private redis-server on a spare port, emptied between runs and stopped at the end.
 */
import { realpathSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchScript, runNode, startNode, waitForOutput } from './lib/nodeChild.js';
import { cpuSeconds } from './lib/cpuSeconds.js';
import { dataDir } from './lib/benchData.js';
import { startBenchRedis } from './lib/benchRedis.js';
import { load, machine, median, mib, rate } from './lib/benchStats.js';
import { validateBench, describeValidate, type ValidateFigures } from './validateBench.js';
import { importBench, describeImport, type ImportFigures } from './importBench.js';
import { fileBench, describeFile, type FileFigures } from './fileBench.js';
import { deliveryBench, describeDelivery, LATENCY_MS, TOKEN_LIFETIME_S, type DeliveryFigures, type DeliveryRun } from './deliveryBench.js';

/** The concurrency for the end-to-end file (#17). */
const FILE_CONCURRENCY = 100;

export interface BenchOptions {
  /** Repetitions of every benchmark; medians are reported. */
  runs: number;
  /** Rows of the big validate/import file; default 1,000,000. */
  rows: number;
  /** Rows of the small file of the memory-vs-size comparison; default 100,000. */
  smallRows: number;
  /** Orders delivered per delivery run; default 50,000. */
  orders: number;
  /** Rows of the end-to-end file (#17); default 7,000 (about 5,000 orders). */
  fileRows: number;
  concurrencies: number[];
  processes: number[];
  /** Requests of the simulator-alone run. */
  simulatorRequests: number;
  /** Benchmarks to run; default all. */
  only: Set<string>;
  /** Where progress lines go; default stdout. */
  log(line: string): void;
}

export const FULL: Omit<BenchOptions, 'log' | 'only'> = { runs: 3, rows: 1_000_000, smallRows: 100_000, orders: 50_000, fileRows: 7_000, concurrencies: [50, 200], processes: [1, 2, 4], simulatorRequests: 30_000 };
export const QUICK: Omit<BenchOptions, 'log' | 'only'> = { runs: 1, rows: 4_000, smallRows: 1_000, orders: 1_000, fileRows: 700, concurrencies: [50, 200], processes: [1, 2], simulatorRequests: 2_000 };

export interface RunFigures {
  load: number;
  validateSmall?: ValidateFigures;
  validate?: ValidateFigures;
  import?: ImportFigures;
  delivery?: DeliveryFigures;
  file?: FileFigures;
  simulatorAlone?: SimulatorAloneFigures;
}

export interface BenchReport {
  machine: string;
  options: Omit<BenchOptions, 'log' | 'only'> & { only: string[] };
  runs: RunFigures[];
  table: string;
}


export interface SimulatorAloneFigures {
  /** Requests/s one client process got (bound by the client: it needs more CPU than the simulator). */
  requestsPerSecond: number;
  /** Requests per CPU-second of the simulator process: what one core of simulator answers. */
  requestsPerCpuSecond: number;
}

/** #8: the simulator in its own process (no latency), driven by bench/simulatorAlone.ts from another. */
async function simulatorAlone(requests: number): Promise<SimulatorAloneFigures> {
  const server = await startNode(benchScript('simulatorServer'), ['0', '3600']);
  try {
    const url = (await waitForOutput(server, /\{"url":"([^"]+)"\}/))[1]!;
    const pid = server.child.pid!;
    // The client warms up with its own first requests; CPU is counted over the whole client run.
    const before = await cpuSeconds(pid);
    const result = await runNode(benchScript('simulatorAlone'), [String(requests), '64', url]);
    const used = (await cpuSeconds(pid)) - before;
    const match = /(\d+) req\/s/.exec(result.stdout);
    const warmup = Math.min(5000, requests);
    if (match === null) throw new Error(`simulatorAlone printed no rate:\n${result.stdout}`);
    return { requestsPerSecond: Number(match[1]), requestsPerCpuSecond: (requests + warmup + 3) / used };
  } finally {
    server.child.kill('SIGTERM');
    await server.done;
  }
}

export async function runBenchmarks(options: BenchOptions): Promise<BenchReport> {
  const wants = (name: string): boolean => options.only.size === 0 || options.only.has(name);
  const redis = await startBenchRedis();
  const runs: RunFigures[] = [];
  try {
    for (let i = 0; i < options.runs; i++) {
      const run: RunFigures = { load: load() };
      options.log(`== run ${i + 1}/${options.runs} (load ${run.load})`);
      if (wants('validate')) {
        run.validateSmall = await validateBench(options.smallRows);
        options.log(describeValidate(run.validateSmall));
        run.validate = await validateBench(options.rows);
        options.log(describeValidate(run.validate));
      }
      if (wants('import')) {
        run.import = await importBench(options.rows, redis);
        options.log(describeImport(run.import));
      }
      if (wants('delivery')) {
        run.delivery = await deliveryBench({ orders: options.orders, concurrencies: options.concurrencies, processes: options.processes, redis });
        options.log(describeDelivery(run.delivery));
      }
      if (wants('file')) {
        run.file = await fileBench(options.fileRows, FILE_CONCURRENCY, redis);
        options.log(describeFile(run.file));
      }
      if (wants('simulator')) {
        run.simulatorAlone = await simulatorAlone(options.simulatorRequests);
        options.log(`simulator alone (own process): ${rate(run.simulatorAlone.requestsPerSecond)} req/s from one client process; ${rate(run.simulatorAlone.requestsPerCpuSecond)} req per simulator CPU-second`);
      }
      runs.push(run);
    }
  } finally {
    await redis.stop();
  }
  const { log: _log, only, ...rest } = options;
  return { machine: machine(), options: { ...rest, only: [...only] }, runs, table: summaryTable(runs, options) };
}

/** The table with the medians of every run; ratios are medians of same-run ratios. */
export function summaryTable(runs: RunFigures[], options: Pick<BenchOptions, 'rows' | 'smallRows' | 'orders'>): string {
  const m = (pick: (r: RunFigures) => number | undefined): number => median(runs.map(pick).filter((v): v is number => v !== undefined));
  const rows: string[] = ['| # | what | ours (median) | bare baseline (median) | ratio (median of same-run ratios) | target |', '|---|---|---|---|---|---|'];
  if (runs.some((r) => r.validate)) {
    rows.push(
      `| 1 | validate ${rate(options.rows)} rows | ${rate(m((r) => r.validate?.ours.rowsPerSecond))} rows/s, peak ${mib(m((r) => r.validate?.ours.peakRssBytes))} | ${rate(m((r) => r.validate?.bare.rowsPerSecond))} rows/s, peak ${mib(m((r) => r.validate?.bare.peakRssBytes))} | ${m((r) => r.validate?.ratio).toFixed(2)}x | >= 0.8x |`,
      `| 3 | peak RSS of validate, ${rate(options.smallRows)} -> ${rate(options.rows)} rows | ${mib(m((r) => r.validateSmall?.ours.peakRssBytes))} -> ${mib(m((r) => r.validate?.ours.peakRssBytes))} (${(m((r) => r.validate?.ours.peakRssBytes) / m((r) => r.validateSmall?.ours.peakRssBytes)).toFixed(2)}x) | - | - | <= 200 MB, < 1.2x |`,
    );
  }
  if (runs.some((r) => r.import)) {
    rows.push(
      `| 2 | import ${rate(options.rows)} rows (no --wait) | ${rate(m((r) => r.import?.ours.ordersPerSecond))} orders/s, peak ${mib(m((r) => r.import?.ours.peakRssBytes))} | ${rate(m((r) => r.import?.bare.ordersPerSecond))} jobs/s, peak ${mib(m((r) => r.import?.bare.peakRssBytes))} | ${m((r) => r.import?.ratio).toFixed(2)}x | >= 0.7x |`,
      `| 7 | Redis per queued order (import) | ${rate(m((r) => r.import?.ours.redisBytesPerOrder))} B (job hash ${rate(m((r) => r.import?.ours.jobBytes))} B, ledger entry ${rate(m((r) => r.import?.ours.ledgerEntryBytes))} B) | ${rate(m((r) => r.import?.bare.redisBytesPerOrder))} B per bare job | - | report |`,
    );
  }
  const delivery = runs.map((r) => r.delivery).filter((d): d is DeliveryFigures => d !== undefined);
  if (delivery.length > 0) {
    for (const [i, pair] of delivery[0]!.pairs.entries()) {
      const pick = (f: (p: DeliveryFigures['pairs'][number]) => number): number => median(delivery.map((d) => f(d.pairs[i]!)));
      rows.push(
        `| 4 | deliver ${rate(options.orders)} orders, ${LATENCY_MS} ms, concurrency ${pair.ours.concurrency} | ${rate(pick((p) => p.ours.ordersPerSecond))} orders/s | ${rate(pick((p) => p.bare.ordersPerSecond))} orders/s | ${pick((p) => p.ratio).toFixed(2)}x | >= 0.85x |`,
        `| 16 | CPU-seconds per 1,000 delivered orders (c=${pair.ours.concurrency}) | ${pick((p) => p.ours.cpuPer1000?.total ?? 0).toFixed(2)} s (worker ${pick((p) => p.ours.cpuPer1000?.workers ?? 0).toFixed(2)} + Redis ${pick((p) => p.ours.cpuPer1000?.redis ?? 0).toFixed(2)}) | ${pick((p) => p.bare.cpuPer1000?.total ?? 0).toFixed(2)} s (the loop) | ${pick((p) => (p.ours.cpuPer1000?.total ?? 0) / (p.bare.cpuPer1000?.total ?? 1)).toFixed(1)}x the CPU | report |`,
        `| 16 | Redis commands per delivered order (c=${pair.ours.concurrency}) | ${pick((p) => p.ours.totalCommandsPerOrder ?? 0).toFixed(1)} | - | - | <= 15 |`,
        `| 6 | token requests during #4 (c=${pair.ours.concurrency}), ${TOKEN_LIFETIME_S} s lifetime | ${pick((p) => p.ours.tokenRequests)} in ${pick((p) => p.ours.seconds).toFixed(1)} s (budget ${pick((p) => p.ours.tokenBudget).toFixed(1)}) | ${pick((p) => p.bare.tokenRequests)} in ${pick((p) => p.bare.seconds).toFixed(1)} s | - | equal (+1) |`,
      );
    }
    for (const [i, run] of delivery[0]!.scaling.entries()) {
      const cpu = median(delivery.map((d) => d.scaling[i]!.cpuPer1000?.total ?? 0)).toFixed(2);
      rows.push(`| 5 | ${run.processes} worker process(es) x concurrency ${run.concurrency} | ${rate(median(delivery.map((d) => d.scaling[i]!.ordersPerSecond)))} orders/s, ${cpu} CPU-s/1k orders | - | ${(median(delivery.map((d) => d.scaling[i]!.ordersPerSecond / d.scaling[0]!.ordersPerSecond))).toFixed(2)}x of 1 process | report |`);
    }
    const clustered = delivery.map((d) => d.cluster).filter((c): c is DeliveryRun => c !== undefined);
    if (clustered.length > 0) {
      const c = (f: (r: DeliveryRun) => number): number => median(clustered.map(f));
      rows.push(`| 5 | Redis Cluster (3 local nodes), 1 worker process x concurrency ${clustered[0]!.concurrency} | ${rate(c((r) => r.ordersPerSecond))} orders/s, ${c((r) => r.cpuPer1000?.total ?? 0).toFixed(2)} CPU-s/1k orders, ${c((r) => r.totalCommandsPerOrder ?? 0).toFixed(1)} commands/order | - | ${median(delivery.filter((d) => d.cluster).map((d) => d.cluster!.ordersPerSecond / d.scaling[0]!.ordersPerSecond)).toFixed(2)}x of one Redis | report |`);
    }
    rows.push(`| 7 | Redis per delivered order (ledger) | ledger entry ${rate(median(delivery.map((d) => d.pairs[0]!.ours.ledgerEntryBytes ?? 0)))} B; all left per order ${rate(median(delivery.map((d) => d.pairs[0]!.ours.residueBytesPerOrder ?? 0)))} B | - | - | report |`);
  }
  if (runs.some((r) => r.file)) {
    rows.push(
      `| 17 | a whole file end to end, ${rate(m((r) => r.file?.ours.orders))} orders, concurrency ${FILE_CONCURRENCY}: worker + \`import --wait\` vs the bare script | ${m((r) => r.file?.ours.seconds).toFixed(1)} s, ${rate(m((r) => r.file?.ours.ordersPerSecond))} orders/s | ${m((r) => r.file?.bare.seconds).toFixed(1)} s, ${rate(m((r) => r.file?.bare.ordersPerSecond))} orders/s | ${m((r) => r.file?.ratio).toFixed(2)}x | >= 0.85x |`,
    );
  }
  if (runs.some((r) => r.simulatorAlone !== undefined)) {
    const needed = median(delivery.map((d) => Math.max(...d.pairs.map((p) => Math.max(p.bare.ordersPerSecond, p.ours.ordersPerSecond)))));
    const alone = m((r) => r.simulatorAlone?.requestsPerSecond);
    const perCpu = m((r) => r.simulatorAlone?.requestsPerCpuSecond);
    const times = (n: number): string => (Number.isFinite(needed) ? `${(n / needed).toFixed(1)}x` : '-');
    rows.push(`| 8 | simulator alone, no latency, own process | ${rate(alone)} req/s (client-bound); ${rate(perCpu)} req per simulator CPU-second | - | ${times(alone)} / ${times(perCpu)} the fastest #4 rate | >= 3x |`);
  }
  return rows.join('\n');
}

export function parseArgs(argv: string[]): BenchOptions {
  const flag = (name: string): string | undefined => {
    const at = argv.indexOf(`--${name}`);
    return at === -1 ? undefined : argv[at + 1];
  };
  const base = argv.includes('--quick') ? QUICK : FULL;
  const num = (name: string, fallback: number): number => (flag(name) === undefined ? fallback : Number(flag(name)));
  const list = (name: string, fallback: number[]): number[] => flag(name)?.split(',').map(Number) ?? fallback;
  return {
    runs: num('runs', base.runs),
    rows: num('rows', base.rows),
    smallRows: num('small-rows', base.smallRows),
    orders: num('orders', base.orders),
    fileRows: num('file-rows', base.fileRows),
    concurrencies: list('concurrency', base.concurrencies),
    processes: list('processes', base.processes),
    simulatorRequests: num('simulator-requests', base.simulatorRequests),
    only: new Set(flag('only')?.split(',') ?? []),
    log: (line) => process.stdout.write(line + '\n'),
  };
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const options = parseArgs(process.argv.slice(2));
  options.log(`machine: ${machine()}`);
  const report = await runBenchmarks(options);
  const file = join(dataDir, `results-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, JSON.stringify(report, null, 2));
  options.log(`\n${report.table}\n\nraw figures: ${file}`);
}
