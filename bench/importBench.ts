/**
 * Benchmarks #2 and #7 (queued side): `bulkorder import` without --wait (the real CLI, its own
 * process) into a private redis-server, against the bare baseline (csv-parse + the row schema
 * + BullMQ addBulk in chunks, bench/baselines/bareImport.ts) into the same server, emptied
 * in between. Reports orders/s, peak RSS, Redis memory per queued order and Redis commands
 * per order (INFO commandstats; commands run inside Lua scripts count too).
 *
 *   node dist/bench/importBench.js [rows=100000]
 *
 * Bound by: the importer's CPU (one core) while Redis, on the other core, is mostly idle;
 * see BENCHMARKS.md for the profile.
 */
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchScript, cliEntry, runNode } from './lib/nodeChild.js';
import { orderFile } from './lib/benchData.js';
import { startBenchRedis, perOrder, type BenchRedis } from './lib/benchRedis.js';
import { load, mib, rate } from './lib/benchStats.js';

export const BENCH_PREFIX = 'bench';

export interface ImportFigures {
  rows: number;
  load: number;
  ours: { orders: number; ordersPerSecond: number; peakRssBytes: number; seconds: number; commandsPerOrder: string; redisBytesPerOrder: number; ledgerEntryBytes: number; jobBytes: number };
  bare: { orders: number; ordersPerSecond: number; peakRssBytes: number; seconds: number; commandsPerOrder: string; redisBytesPerOrder: number };
  /** ours / bare, orders per second. */
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

/** Average MEMORY USAGE of up to `sample` keys matching `pattern`. */
export async function keyBytes(redis: BenchRedis, pattern: string, sample = 200): Promise<number> {
  const [, keys] = await redis.client.scan('0', 'MATCH', pattern, 'COUNT', 5000);
  const picked = keys.slice(0, sample);
  if (picked.length === 0) return 0;
  const sizes = await Promise.all(picked.map((key) => redis.client.memory('USAGE', key, 'SAMPLES', '0')));
  return sizes.reduce((sum: number, n) => sum + Number(n ?? 0), 0) / picked.length;
}

export async function importBench(rows: number, redisGiven?: BenchRedis): Promise<ImportFigures> {
  const file = await orderFile(rows);
  const redis = redisGiven ?? (await startBenchRedis());
  const rejects = join(tmpdir(), `bench-import-${process.pid}.rejects.csv`);
  try {
    const loadNow = load();
    await redis.reset();
    const before = await redis.usedMemory();
    const ours = await runNode(cliEntry, ['import', file, '--rejects', rejects], benchEnv(redis.url), [0, 4]);
    const queued = Number(/queued (\d+)/.exec(ours.stdout)?.[1] ?? Number.NaN);
    if (!(queued > 0)) throw new Error(`import queued nothing:\n${ours.stdout}\n${ours.stderr.slice(-2000)}`);
    const oursMemory = (await redis.usedMemory()) - before;
    const oursCalls = await redis.commandCalls();
    const ledgerEntryBytes = await keyBytes(redis, `${BENCH_PREFIX}:acceptance:*:ledger:*`);
    const jobBytes = await keyBytes(redis, `${BENCH_PREFIX}:acceptance:*:orders:ref.*`);

    await redis.reset();
    const bareBefore = await redis.usedMemory();
    const bare = await runNode(benchScript('baselines/bareImport'), [file, redis.url, 'bare']);
    const jobs = (JSON.parse(bare.stdout) as { jobs: number }).jobs;
    const bareMemory = (await redis.usedMemory()) - bareBefore;
    const bareCalls = await redis.commandCalls();
    await redis.reset();

    const oursRate = queued / (ours.wallMs / 1000);
    const bareRate = jobs / (bare.wallMs / 1000);
    return {
      rows,
      load: loadNow,
      ours: {
        orders: queued,
        ordersPerSecond: oursRate,
        peakRssBytes: ours.peakRssBytes,
        seconds: ours.wallMs / 1000,
        commandsPerOrder: perOrder(oursCalls, queued),
        redisBytesPerOrder: oursMemory / queued,
        ledgerEntryBytes,
        jobBytes,
      },
      bare: { orders: jobs, ordersPerSecond: bareRate, peakRssBytes: bare.peakRssBytes, seconds: bare.wallMs / 1000, commandsPerOrder: perOrder(bareCalls, jobs), redisBytesPerOrder: bareMemory / jobs },
      ratio: oursRate / bareRate,
    };
  } finally {
    await rm(rejects, { force: true });
    if (redisGiven === undefined) await redis.stop();
  }
}

export function describeImport(f: ImportFigures): string {
  return (
    `import ${rate(f.rows)} rows (load ${f.load}): ours ${rate(f.ours.orders)} orders at ${rate(f.ours.ordersPerSecond)}/s, peak ${mib(f.ours.peakRssBytes)}, ` +
    `Redis ${rate(f.ours.redisBytesPerOrder)} B/order (ledger entry ${rate(f.ours.ledgerEntryBytes)} B, job hash ${rate(f.ours.jobBytes)} B), commands/order: ${f.ours.commandsPerOrder}\n` +
    `  bare ${rate(f.bare.orders)} jobs at ${rate(f.bare.ordersPerSecond)}/s, peak ${mib(f.bare.peakRssBytes)}, Redis ${rate(f.bare.redisBytesPerOrder)} B/job, commands/job: ${f.bare.commandsPerOrder}; ratio ${f.ratio.toFixed(2)}x`
  );
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(describeImport(await importBench(Number(process.argv[2] ?? 100_000))) + '\n');
}
