/**
 * Benchmarks #2 and #7 (queued side): `bulkorder import` without --wait (the real CLI, its own
 * process) into a private redis-server, against the bare baseline (csv-parse + the row schema
 * + BullMQ addBulk in chunks, bench/baselines/bareImport.ts) into the same server, emptied
 * in between. Ours runs once per BULKORDER_ORDERS_PER_JOB value (default 1 and 25: one BullMQ
 * job per order, the shape before issue 16's chunk jobs, and the default), each beside the same bare run.
 * Reports orders/s, peak RSS, Redis memory per queued order (totals of every key by kind, divided by
 * the orders queued) and Redis commands per order (INFO commandstats; commands run inside Lua
 * scripts count too).
 *
 *   node dist/bench/importBench.js [rows=100000] [ordersPerJob=1,25] [shape=spread|grouped|shuffled]
 *
 * Bound by: the importer's CPU (one core) while Redis, on the other core, is mostly idle;
 * see BENCHMARKS.md for the profile.
 */
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, redisPrefix } from '../src/config.js';
import { ORDERS_QUEUE } from '../src/queues.js';
import { benchScript, cliEntry, runNode } from './lib/nodeChild.js';
import { forgetImports, orderFile, type OrderFileShape } from './lib/benchData.js';
import { startBenchRedis, perOrder, type BenchRedis } from './lib/benchRedis.js';
import { load, mib, oursLabel, rate } from './lib/benchStats.js';
import { keyspaceBytes } from './lib/keyspaceBytes.js';

export const BENCH_PREFIX = 'bench';

/** The product's default BULKORDER_ORDERS_PER_JOB (src/config/configSchema.ts), so the benchmarks follow it. */
export const DEFAULT_ORDERS_PER_JOB = loadConfig({ env: {} }).delivery.ordersPerJob;

/** BULKORDER_ORDERS_PER_JOB values measured side by side: one order per job (the shape before issue 16's chunks; a chunk of one since issue 32), and the default. */
export const ORDERS_PER_JOB = [1, DEFAULT_ORDERS_PER_JOB];

/** One `bulkorder import` with one BULKORDER_ORDERS_PER_JOB. Bytes are per queued order, from totals (see keyspaceBytes). */
export interface ImportOurs {
  ordersPerJob: number;
  orders: number;
  ordersPerSecond: number;
  peakRssBytes: number;
  seconds: number;
  /** CPU-seconds of the import process (user + system). */
  cpuSeconds: number;
  commandsPerOrder: string;
  /** used_memory after the import minus before, per queued order. */
  redisBytesPerOrder: number;
  /** BullMQ's job hashes, all of them, per queued order (a chunk job's hash counts once for its N orders). */
  jobBytes: number;
  /** Ledger entries, all of them, per queued order (one entry per order). */
  ledgerEntryBytes: number;
  /** The rest of redisBytesPerOrder: other keys (wait list, event stream, batch, unqueued index) and Redis's own per-key overhead. */
  otherBytes: number;
  /** Job hashes counted: orders / jobHashes is the orders per job the importer made. */
  jobHashes: number;
}

export interface ImportFigures {
  rows: number;
  load: number;
  /** The last of `variants` (the product's default unless told otherwise). */
  ours: ImportOurs;
  /** One import per orders-per-job value, each beside the same bare run; ratio = its orders/s / bare jobs/s. */
  variants: { ours: ImportOurs; ratio: number }[];
  bare: {
    orders: number;
    ordersPerSecond: number;
    peakRssBytes: number;
    seconds: number;
    cpuSeconds: number;
    commandsPerOrder: string;
    redisBytesPerOrder: number;
  };
  /** ours / bare, orders per second (of `ours`). */
  ratio: number;
}

/** The BULKORDER_* settings of a CLI process working on the benchmark's Redis. */
export function benchEnv(redisUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    BULKORDER_REDIS_PREFIX: BENCH_PREFIX,
    BULKORDER_USER_AGENT: 'Bench-BulkorderBench',
    BULKORDER_BASE_URL: 'http://127.0.0.1:9',
    BULKORDER_BUSINESS_CLIENT_ID: 'sim-business',
    BULKORDER_BUSINESS_CLIENT_SECRET: 'sim-business-secret',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** The key prefix the CLI uses with `env` (src/config.ts decides it). */
export function benchPrefix(env: Record<string, string>): string {
  return redisPrefix(loadConfig({ env: {}, overrides: env }));
}

async function oursImport(redis: BenchRedis, file: string, rejects: string, ordersPerJob: number): Promise<ImportOurs> {
  await redis.reset();
  const before = await redis.usedMemory();
  const env = benchEnv(redis.url, { BULKORDER_ORDERS_PER_JOB: String(ordersPerJob) });
  await forgetImports(file);
  const run = await runNode(cliEntry, ['import', file, '--rejects', rejects], env, [0, 4]);
  const queued = Number(/queued (\d+)/.exec(run.stdout)?.[1] ?? Number.NaN);
  if (!(queued > 0)) throw new Error(`import queued nothing:\n${run.stdout}\n${run.stderr.slice(-2000)}`);
  const memory = (await redis.usedMemory()) - before;
  const calls = await redis.commandCalls();
  const keys = await keyspaceBytes(redis.client, benchPrefix(env), ORDERS_QUEUE);
  const jobBytes = keys.jobHashes.bytes / queued;
  const ledgerEntryBytes = keys.ledgerEntries.bytes / queued;
  return {
    ordersPerJob,
    orders: queued,
    ordersPerSecond: queued / (run.wallMs / 1000),
    peakRssBytes: run.peakRssBytes,
    seconds: run.wallMs / 1000,
    cpuSeconds: run.cpuSeconds,
    commandsPerOrder: perOrder(calls, queued),
    redisBytesPerOrder: memory / queued,
    jobBytes,
    ledgerEntryBytes,
    otherBytes: memory / queued - jobBytes - ledgerEntryBytes,
    jobHashes: keys.jobHashes.keys,
  };
}

/**
 * Ours once per `ordersPerJob` value and the bare baseline once, into the same emptied server; the
 * bare run sits after the first of ours, so a before/after pair brackets it in time.
 */
export async function importBench(
  rows: number,
  redisGiven?: BenchRedis,
  ordersPerJob: readonly number[] = ORDERS_PER_JOB,
  shape: OrderFileShape = 'spread',
): Promise<ImportFigures> {
  if (ordersPerJob.length === 0) throw new Error('importBench: no orders-per-job value to measure');
  const file = await orderFile(rows, 1, shape);
  const redis = redisGiven ?? (await startBenchRedis());
  const rejects = join(tmpdir(), `bench-import-${process.pid}.rejects.csv`);
  try {
    const loadNow = load();
    const ours: ImportOurs[] = [await oursImport(redis, file, rejects, ordersPerJob[0]!)];

    await redis.reset();
    const bareBefore = await redis.usedMemory();
    const bare = await runNode(benchScript('baselines/bareImport'), [file, redis.url, 'bare']);
    const jobs = (JSON.parse(bare.stdout) as { jobs: number }).jobs;
    const bareMemory = (await redis.usedMemory()) - bareBefore;
    const bareCalls = await redis.commandCalls();
    const bareRate = jobs / (bare.wallMs / 1000);

    for (const n of ordersPerJob.slice(1)) ours.push(await oursImport(redis, file, rejects, n));
    await redis.reset();

    const variants = ours.map((o) => ({ ours: o, ratio: o.ordersPerSecond / bareRate }));
    const last = variants[variants.length - 1]!;
    return {
      rows,
      load: loadNow,
      ours: last.ours,
      variants,
      bare: {
        orders: jobs,
        ordersPerSecond: bareRate,
        peakRssBytes: bare.peakRssBytes,
        seconds: bare.wallMs / 1000,
        cpuSeconds: bare.cpuSeconds,
        commandsPerOrder: perOrder(bareCalls, jobs),
        redisBytesPerOrder: bareMemory / jobs,
      },
      ratio: last.ratio,
    };
  } finally {
    await rm(rejects, { force: true });
    if (redisGiven === undefined) await redis.stop();
  }
}

export function describeImport(f: ImportFigures): string {
  const ours = f.variants.map(
    ({ ours: o, ratio }) =>
      `  ${oursLabel(o.ordersPerJob)}: ${rate(o.orders)} orders in ${rate(o.jobHashes)} jobs at ${rate(o.ordersPerSecond)}/s, CPU ${o.cpuSeconds.toFixed(1)} s, peak ${mib(o.peakRssBytes)}, ` +
      `Redis ${rate(o.redisBytesPerOrder)} B/order (job hashes ${rate(o.jobBytes)} B, ledger entries ${rate(o.ledgerEntryBytes)} B, other ${rate(o.otherBytes)} B), commands/order: ${o.commandsPerOrder}; ratio ${ratio.toFixed(2)}x`,
  );
  return [
    `import ${rate(f.rows)} rows (load ${f.load}):`,
    ...ours,
    `  bare ${rate(f.bare.orders)} jobs at ${rate(f.bare.ordersPerSecond)}/s, CPU ${f.bare.cpuSeconds.toFixed(1)} s, peak ${mib(f.bare.peakRssBytes)}, Redis ${rate(f.bare.redisBytesPerOrder)} B/job, commands/job: ${f.bare.commandsPerOrder}`,
  ].join('\n');
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ordersPerJob = process.argv[3]?.split(',').map(Number) ?? ORDERS_PER_JOB;
  const shape = (process.argv[4] ?? 'spread') as OrderFileShape;
  process.stdout.write(
    describeImport(await importBench(Number(process.argv[2] ?? 100_000), undefined, ordersPerJob, shape)) + '\n',
  );
}
