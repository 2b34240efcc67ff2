/**
 * `npm run bench`: every benchmark of issue 7, each figure side by side with its bare baseline
 * in the same run, repeated `--runs` times (default 3); prints each run as it ends and then a
 * table of medians, and keeps the raw figures in bench/data/results-<time>.json.
 *
 *   npm run bench                          validate and import of 1M rows, delivery of 50k orders
 *   npm run bench:quick                    small sizes, one run (the CI smoke test)
 *   node dist/bench/run.js --only delivery --runs 1 --orders 20000 --rows 200000
 *   node dist/bench/run.js --only file --file-rows 7000      a 5,000-order file end to end (#17)
 *   node dist/bench/run.js --orders-per-job 1,25             the product with BULKORDER_ORDERS_PER_JOB=1
 *       (one BullMQ job per order, before issue 16's chunk jobs) and =25 (the default) in the same run:
 *       import, delivery and the file end to end each run once per value beside the same bare baseline
 *
 * Every process measured is its own (the real CLI, the baselines, the simulator), and Redis is
 * a private redis-server on a spare port, emptied between runs and stopped at the end.
 */
import { realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchScript, runNode, startNode, waitForOutput } from './lib/nodeChild.js';
import { cpuSeconds } from './lib/cpuSeconds.js';
import { dataDir } from './lib/benchData.js';
import { startBenchRedis } from './lib/benchRedis.js';
import { load, machine, median, mib, oursLabel, rate } from './lib/benchStats.js';
import { validateBench, describeValidate, type ValidateFigures } from './validateBench.js';
import {
  DEFAULT_ORDERS_PER_JOB,
  importBench,
  describeImport,
  ORDERS_PER_JOB,
  type ImportFigures,
} from './importBench.js';
import { fileBench, describeFile, type FileFigures } from './fileBench.js';
import {
  deliveryBench,
  describeDelivery,
  LATENCY_MS,
  TOKEN_LIFETIME_S,
  type DeliveryFigures,
  type DeliveryRun,
} from './deliveryBench.js';

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
  /**
   * BULKORDER_ORDERS_PER_JOB values the product is measured with, each beside the same bare run
   * (import, delivery pairs, the file end to end); the scaling and cluster runs use the last. Full: 1
   * (before issue 16's chunk jobs) and 10 (the default); quick: 10 only.
   */
  ordersPerJob: number[];
  /** Requests of the simulator-alone run. */
  simulatorRequests: number;
  /** Benchmarks to run; default all. */
  only: Set<string>;
  /** Where progress lines go; default stdout. */
  log(line: string): void;
}

export const FULL: Omit<BenchOptions, 'log' | 'only'> = {
  runs: 3,
  rows: 1_000_000,
  smallRows: 100_000,
  orders: 50_000,
  fileRows: 7_000,
  concurrencies: [50, 200],
  processes: [1, 2, 4],
  ordersPerJob: ORDERS_PER_JOB,
  simulatorRequests: 30_000,
};
export const QUICK: Omit<BenchOptions, 'log' | 'only'> = {
  runs: 1,
  rows: 4_000,
  smallRows: 1_000,
  orders: 1_000,
  fileRows: 700,
  concurrencies: [50, 200],
  processes: [1, 2],
  ordersPerJob: [DEFAULT_ORDERS_PER_JOB],
  simulatorRequests: 2_000,
};

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
        run.import = await importBench(options.rows, redis, options.ordersPerJob);
        options.log(describeImport(run.import));
      }
      if (wants('delivery')) {
        run.delivery = await deliveryBench({
          orders: options.orders,
          concurrencies: options.concurrencies,
          processes: options.processes,
          ordersPerJob: options.ordersPerJob,
          redis,
        });
        options.log(describeDelivery(run.delivery));
      }
      if (wants('file')) {
        run.file = await fileBench(options.fileRows, FILE_CONCURRENCY, redis, options.ordersPerJob);
        options.log(describeFile(run.file));
      }
      if (wants('simulator')) {
        run.simulatorAlone = await simulatorAlone(options.simulatorRequests);
        options.log(
          `simulator alone (own process): ${rate(run.simulatorAlone.requestsPerSecond)} req/s from one client process; ${rate(run.simulatorAlone.requestsPerCpuSecond)} req per simulator CPU-second`,
        );
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
  const m = (pick: (r: RunFigures) => number | undefined): number =>
    median(runs.map(pick).filter((v): v is number => v !== undefined));
  const rows: string[] = [
    '| # | what | ours (median) | bare baseline (median) | ratio (median of same-run ratios) | target |',
    '|---|---|---|---|---|---|',
  ];
  if (runs.some((r) => r.validate)) {
    const slowdown = (r: RunFigures): number | undefined => r.validate?.slowdown.shuffled;
    const shuffledPeak = (r: RunFigures | undefined, small = false): number | undefined =>
      (small ? r?.validateSmall : r?.validate)?.shapes.find((run) => run.shape === 'shuffled')?.peakRssBytes;
    rows.push(
      `| 1 | validate ${rate(options.rows)} rows, orders' lines together (grouped) | ${rate(m((r) => r.validate?.ours.rowsPerSecond))} rows/s, CPU ${m((r) => r.validate?.ours.cpuSeconds).toFixed(1)} s, peak ${mib(m((r) => r.validate?.ours.peakRssBytes))} | csv-parse columns + zod, consecutive rows merged: ${rate(m((r) => r.validate?.bare.rowsPerSecond))} rows/s, CPU ${m((r) => r.validate?.bare.cpuSeconds).toFixed(1)} s, peak ${mib(m((r) => r.validate?.bare.peakRssBytes))} (csv-parse + validateRow: ${rate(m((r) => r.validate?.bareRows.rowsPerSecond))} rows/s) | ${m((r) => r.validate?.ratio).toFixed(2)}x | >= 1.0x |`,
      `| 1b | validate ${rate(options.rows)} rows, the same rows shuffled | ${rate(m((r) => r.validate?.shapes[1]?.rowsPerSecond))} rows/s, peak ${mib(m((r) => shuffledPeak(r)))}; same orders and rejects: ${runs.every((r) => r.validate?.sameOrders !== false) ? 'yes' : 'NO'} | - | ${m(slowdown).toFixed(2)}x the grouped time | <= 2.5x |`,
      `| 3 | peak RSS of validate, ${rate(options.smallRows)} -> ${rate(options.rows)} rows, grouped / shuffled | ${mib(m((r) => r.validateSmall?.ours.peakRssBytes))} -> ${mib(m((r) => r.validate?.ours.peakRssBytes))} / ${mib(m((r) => shuffledPeak(r, true)))} -> ${mib(m((r) => shuffledPeak(r)))} | - | - | <= 150 MiB |`,
    );
  }
  const imports = runs.map((r) => r.import).filter((f): f is ImportFigures => f !== undefined);
  if (imports.length > 0) {
    for (const [i, { ours: first }] of imports[0]!.variants.entries()) {
      const pick = (f: (v: ImportFigures['variants'][number]) => number): number =>
        median(imports.map((d) => f(d.variants[i]!)));
      const who = oursLabel(first.ordersPerJob);
      rows.push(
        `| 2 | import ${rate(options.rows)} rows (no --wait): ${who} | ${rate(pick((v) => v.ours.ordersPerSecond))} orders/s, peak ${mib(pick((v) => v.ours.peakRssBytes))} | ${rate(median(imports.map((d) => d.bare.ordersPerSecond)))} jobs/s, peak ${mib(median(imports.map((d) => d.bare.peakRssBytes)))} | ${pick((v) => v.ratio).toFixed(2)}x | >= 0.7x |`,
        `| 7 | Redis per queued order (import): ${who} | ${rate(pick((v) => v.ours.redisBytesPerOrder))} B (job hashes ${rate(pick((v) => v.ours.jobBytes))} B, ledger entries ${rate(pick((v) => v.ours.ledgerEntryBytes))} B, other ${rate(pick((v) => v.ours.otherBytes))} B; ${pick((v) => v.ours.orders / v.ours.jobHashes).toFixed(1)} orders per job hash) | ${rate(median(imports.map((d) => d.bare.redisBytesPerOrder)))} B per bare job | - | <= 800 B |`,
      );
    }
    rows.push(
      ...beforeAfter(
        imports.map((d) => d.variants.map((v) => v.ours)),
        2,
        `import ${rate(options.rows)} rows`,
        [
          { unit: 'orders/s', of: (o) => o.ordersPerSecond, what: 'the rate' },
          { unit: 'B/order queued', of: (o) => o.redisBytesPerOrder, what: 'the bytes' },
        ],
      ),
    );
  }
  const delivery = runs.map((r) => r.delivery).filter((d): d is DeliveryFigures => d !== undefined);
  if (delivery.length > 0) {
    const first = delivery[0]!.pairs;
    for (const [i, pair] of first.entries()) {
      const pick = (f: (p: DeliveryFigures['pairs'][number]) => number): number =>
        median(delivery.map((d) => f(d.pairs[i]!)));
      const c = pair.ours.concurrency;
      const who = pair.ours.ordersPerJob === undefined ? '' : `, ${oursLabel(pair.ours.ordersPerJob)}`;
      rows.push(
        `| 4 | deliver ${rate(options.orders)} orders, ${LATENCY_MS} ms, concurrency ${c}${who.replace(/^, /, ': ')} | ${rate(pick((p) => p.ours.ordersPerSecond))} orders/s | ${rate(pick((p) => p.bare.ordersPerSecond))} orders/s | ${pick((p) => p.ratio).toFixed(2)}x | >= 0.85x |`,
        `| 16 | CPU-seconds per 1,000 delivered orders (c=${c}${who}) | ${pick((p) => p.ours.cpuPer1000?.total ?? 0).toFixed(2)} s (worker ${pick((p) => p.ours.cpuPer1000?.workers ?? 0).toFixed(2)} + Redis ${pick((p) => p.ours.cpuPer1000?.redis ?? 0).toFixed(2)}) | ${pick((p) => p.bare.cpuPer1000?.total ?? 0).toFixed(2)} s (the loop) | ${pick((p) => (p.ours.cpuPer1000?.total ?? 0) / (p.bare.cpuPer1000?.total ?? 1)).toFixed(1)}x the CPU | report |`,
        `| 16 | Redis commands per delivered order (c=${c}${who}) | ${pick((p) => p.ours.totalCommandsPerOrder ?? 0).toFixed(1)} | - | - | <= 15 |`,
        `| 6 | token requests during #4 (c=${c}${who}), ${TOKEN_LIFETIME_S} s lifetime | ${pick((p) => p.ours.tokenRequests)} in ${pick((p) => p.ours.seconds).toFixed(1)} s (budget ${pick((p) => p.ours.tokenBudget).toFixed(1)}) | ${pick((p) => p.bare.tokenRequests)} in ${pick((p) => p.bare.seconds).toFixed(1)} s | - | equal (+1) |`,
      );
      // After the last variant of a concurrency: each later variant against the first, in the same run.
      if (first[i + 1]?.ours.concurrency !== c) {
        const at = first.flatMap((p, j) => (p.ours.concurrency === c ? [j] : []));
        rows.push(
          ...beforeAfter(
            delivery.map((d) => at.map((j) => d.pairs[j]!.ours)),
            16,
            `deliver ${rate(options.orders)} orders, c=${c}`,
            [
              { unit: 'orders/s', of: (r) => r.ordersPerSecond, what: 'the rate' },
              { unit: 'commands/order', of: (r) => r.totalCommandsPerOrder ?? 0, what: 'the commands', digits: 1 },
              { unit: 'CPU-s/1k orders', of: (r) => r.cpuPer1000?.total ?? 0, what: 'the CPU', digits: 2 },
            ],
          ),
        );
      }
    }
    for (const [i, run] of delivery[0]!.scaling.entries()) {
      const cpu = median(delivery.map((d) => d.scaling[i]!.cpuPer1000?.total ?? 0)).toFixed(2);
      const who = run.ordersPerJob === undefined ? '' : `, ${oursLabel(run.ordersPerJob)}`;
      rows.push(
        `| 5 | ${run.processes} worker process(es) x concurrency ${run.concurrency}${who} | ${rate(median(delivery.map((d) => d.scaling[i]!.ordersPerSecond)))} orders/s, ${cpu} CPU-s/1k orders | - | ${median(delivery.map((d) => d.scaling[i]!.ordersPerSecond / d.scaling[0]!.ordersPerSecond)).toFixed(2)}x of 1 process | report |`,
      );
    }
    const clustered = delivery.map((d) => d.cluster).filter((c): c is DeliveryRun => c !== undefined);
    if (clustered.length > 0) {
      const c = (f: (r: DeliveryRun) => number): number => median(clustered.map(f));
      const who = clustered[0]!.ordersPerJob === undefined ? '' : `, ${oursLabel(clustered[0]!.ordersPerJob)}`;
      rows.push(
        `| 5 | Redis Cluster (3 local nodes), 1 worker process x concurrency ${clustered[0]!.concurrency}${who} | ${rate(c((r) => r.ordersPerSecond))} orders/s, ${c((r) => r.cpuPer1000?.total ?? 0).toFixed(2)} CPU-s/1k orders, ${c((r) => r.totalCommandsPerOrder ?? 0).toFixed(1)} commands/order | - | ${median(delivery.filter((d) => d.cluster).map((d) => d.cluster!.ordersPerSecond / d.scaling[0]!.ordersPerSecond)).toFixed(2)}x of one Redis | report |`,
      );
    }
    // Once per orders-per-job value, from the runs at the first concurrency.
    for (const [i, pair] of first.entries()) {
      if (pair.ours.concurrency !== first[0]!.ours.concurrency) continue;
      const pick = (f: (r: DeliveryRun) => number): number => median(delivery.map((d) => f(d.pairs[i]!.ours)));
      const who = pair.ours.ordersPerJob === undefined ? '' : `: ${oursLabel(pair.ours.ordersPerJob)}`;
      rows.push(
        `| 7 | Redis per delivered order (ledger)${who} | ledger entries ${rate(pick((r) => r.ledgerEntryBytes ?? 0))} B; all left per order ${rate(pick((r) => r.residueBytesPerOrder ?? 0))} B | - | - | report |`,
      );
    }
  }
  const files = runs.map((r) => r.file).filter((f): f is FileFigures => f !== undefined);
  if (files.length > 0) {
    for (const [i, { ours }] of files[0]!.variants.entries()) {
      const pick = (f: (v: FileFigures['variants'][number]) => number): number =>
        median(files.map((d) => f(d.variants[i]!)));
      rows.push(
        `| 17 | a whole file end to end, ${rate(pick((v) => v.ours.orders))} orders, concurrency ${FILE_CONCURRENCY}: worker + \`import --wait\` vs the bare script; ${oursLabel(ours.ordersPerJob)} | ${pick((v) => v.ours.seconds).toFixed(1)} s, ${rate(pick((v) => v.ours.ordersPerSecond))} orders/s | ${median(files.map((d) => d.bare.seconds)).toFixed(1)} s, ${rate(median(files.map((d) => d.bare.ordersPerSecond)))} orders/s | ${pick((v) => v.ratio).toFixed(2)}x | >= 0.85x |`,
      );
    }
    rows.push(
      ...beforeAfter(
        files.map((d) => d.variants.map((v) => v.ours)),
        17,
        'a whole file end to end',
        [{ unit: 'orders/s', of: (o) => o.ordersPerSecond, what: 'the rate' }],
      ),
    );
  }
  if (runs.some((r) => r.simulatorAlone !== undefined)) {
    const needed = median(
      delivery.map((d) => Math.max(...d.pairs.map((p) => Math.max(p.bare.ordersPerSecond, p.ours.ordersPerSecond)))),
    );
    const alone = m((r) => r.simulatorAlone?.requestsPerSecond);
    const perCpu = m((r) => r.simulatorAlone?.requestsPerCpuSecond);
    const times = (n: number): string => (Number.isFinite(needed) ? `${(n / needed).toFixed(1)}x` : '-');
    rows.push(
      `| 8 | simulator alone, no latency, own process | ${rate(alone)} req/s (client-bound); ${rate(perCpu)} req per simulator CPU-second | - | ${times(alone)} / ${times(perCpu)} the fastest #4 rate | >= 3x |`,
    );
  }
  return rows.join('\n');
}

/** One figure of a before/after row: how to read it from a run, its unit, and what its ratio is of. */
interface Compared<T> {
  of(run: T): number;
  unit: string;
  what: string;
  /** Decimals of the figure; default 0 (thousands separated). */
  digits?: number;
}

/**
 * Rows comparing each later orders-per-job value with the first (`before`, when it is 1), from
 * `runs[k]` = run k's product runs in orders-per-job order: medians of each, and the medians of
 * the same-run ratios. None with a single value.
 */
function beforeAfter<T extends { ordersPerJob?: number }>(
  runs: T[][],
  row: number,
  what: string,
  figures: Compared<T>[],
): string[] {
  const head = runs[0] ?? [];
  const show = (f: Compared<T>, v: number): string =>
    `${f.digits === undefined ? rate(v) : v.toFixed(f.digits)} ${f.unit}`;
  return head.slice(1).map((after, j) => {
    const at = j + 1;
    const m = (pick: (r: T[]) => number): number => median(runs.map(pick));
    const ours = figures
      .map((f) =>
        show(
          f,
          m((r) => f.of(r[at]!)),
        ),
      )
      .join(', ');
    const before = figures
      .map((f) =>
        show(
          f,
          m((r) => f.of(r[0]!)),
        ),
      )
      .join(', ');
    const ratios = figures.map((f) => `${m((r) => f.of(r[at]!) / f.of(r[0]!)).toFixed(2)}x ${f.what}`).join(', ');
    return `| ${row} | ${what}, before/after: ${oursLabel(after.ordersPerJob ?? 0)} against ${oursLabel(head[0]!.ordersPerJob ?? 0)} | ${ours} | ${before} | ${ratios} | report |`;
  });
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
    ordersPerJob: list('orders-per-job', base.ordersPerJob),
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
