/**
 * Issue 26's rate-limited API: 2,000 orders (default) delivered by two workers (concurrency 20 each,
 * in this process, the real BullMQ/Redis/undici path) to the simulator with its rate-limit fault (a
 * sliding window of 50 requests a second, 429 with Retry-After: 1 above it). Reports, per variant,
 * the POSTs per order and the achieved rate (orders over the first-to-last delivery span) as a share
 * of the limit; the median of 3 runs. Variants run interleaved in one process, so they share the load:
 *
 *   npx tsx bench/rateLimitBench.ts [orders=2000] [limit=50] [runs=3] [variants=measured,halve]
 *
 * `measured` (BULKORDER_RATE_ADAPT=measured, the default): after the first 429 the rate starts just
 * below the rate the API accepted over the last second, and probes slowly near the rate of the last
 * 429; `halve`: half of what the workers were sending, constant growth (the rule before). Both pace
 * only the records a retried chunk may still send (the fix of a lost slot; the code before paced the
 * whole chunk). Redis: REDIS_URL or 127.0.0.1:6379, under a fresh
 * prefix deleted after each run.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig, redisPrefix } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { openServices, type Services } from '../src/services.js';
import type { OrderPayload } from '../src/ingest/types.js';
import { startSimulator } from '../src/simulator/index.js';
import { startBusinessDelivery } from '../src/assembly/startWorkers.js';
import { ORDERS } from '../src/kinds/orders.js';
import { importAndFollow } from '../src/importer/importAndFollow.js';
import { deleteKeysUnder } from '../src/redis.js';
import { load, machine, median } from './lib/benchStats.js';

const HEADER =
  'orderRef,businessCustomerId,firstName,lastName,street,streetNumber,postalCode,city,countryCode,languageCode,email,telephoneNumber,productId,quantity';

interface RunFigures {
  postsPerOrder: number;
  shareOfLimit: number;
  answered429: number;
  seconds: number;
}

const silent = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

async function oneRun(orders: number, limit: number, variant: string): Promise<RunFigures> {
  const simulator = await startSimulator({ seed: 1, faults: { rateLimitPerSecond: limit } });
  const env = {
    BULKORDER_BASE_URL: simulator.url,
    BULKORDER_USER_AGENT: 'Bench-RateLimit',
    BULKORDER_BUSINESS_CLIENT_ID: 'sim-business',
    BULKORDER_BUSINESS_CLIENT_SECRET: 'sim-business-secret',
    BULKORDER_REDIS_PREFIX: `bulkorder-bench-rate-${randomBytes(4).toString('hex')}`,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    BULKORDER_WORKER_PROCESSES: '1',
    BULKORDER_RATE_ADAPT: variant,
    LOG_LEVEL: 'silent',
  };
  const config = loadConfig({ env: {}, overrides: env });
  const logger = createLogger({ level: 'silent' });
  const services = await openServices(config, ORDERS);
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-rate-bench-'));
  const workers = [];
  try {
    const rows = Array.from(
      { length: orders },
      (_, i) =>
        `R-${i + 1},${1001 + (i % 10)},Anna,de Vries,Keizersgracht,12,1015 CX,Amsterdam,NL,nl,anna.r${i}@example.nl,+31612345678,5001,1`,
    );
    const file = join(dir, 'limited.csv');
    await writeFile(file, [HEADER, ...rows].join('\n') + '\n');
    const options = { prefix: redisPrefix(config), delivery: { ...config.delivery, concurrency: 20 } };
    workers.push(await startBusinessDelivery(config, logger, options));
    workers.push(await startBusinessDelivery(config, logger, options));
    const started = Date.now();
    const trace = process.env.RATE_BENCH_TRACE === '1' ? traceEachSecond(simulator, services) : undefined;
    const outcome = await importAndFollow(file, { force: false }, services, logger, {
      wait: true,
      timeoutMs: 600_000,
      out: silent,
    });
    const seconds = (Date.now() - started) / 1000;
    trace?.stop();
    const counters = simulator.counters();
    if (outcome.batch?.delivered !== orders || counters.duplicateOrdersAccepted !== 0)
      throw new Error(`run did not deliver each order once: ${JSON.stringify(outcome.batch)}`);
    const times = simulator.orders().map((o) => Date.parse(o.receivedAt));
    const span = (Math.max(...times) - Math.min(...times)) / 1000;
    return {
      postsPerOrder: counters.apiRequests.business / orders,
      shareOfLimit: orders / span / limit,
      answered429: counters.statuses['429'] ?? 0,
      seconds,
    };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await deleteKeysUnder(services.redis, env.BULKORDER_REDIS_PREFIX);
    await services.close();
    await simulator.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** RATE_BENCH_TRACE=1: one line a second (accepted, 429 answers, the shared rate), to see where a run loses time. */
function traceEachSecond(
  simulator: Awaited<ReturnType<typeof startSimulator>>,
  services: Services<OrderPayload>,
): { stop(): void } {
  let last = { ok: 0, limited: 0 };
  const timer = setInterval(() => {
    void (async () => {
      const c = simulator.counters();
      const rate = await services.redis.hgetall(services.keys.rate);
      const now = { ok: c.ordersAccepted, limited: c.statuses['429'] ?? 0 };
      const jobs = await services.queue.getJobCounts('wait', 'active', 'delayed');
      console.log(
        `    +${now.ok - last.ok} ok, +${now.limited - last.limited} 429, rate ${Number(rate.rate ?? 0).toFixed(1)}, cuts ${rate.cuts ?? 0}, jobs ${JSON.stringify(jobs)}`,
      );
      last = now;
    })();
  }, 1000);
  return { stop: () => clearInterval(timer) };
}

async function main(): Promise<void> {
  const [ordersArg, limitArg, runsArg, variantsArg] = process.argv.slice(2);
  const orders = Number(ordersArg ?? 2000);
  const limit = Number(limitArg ?? 50);
  const runs = Number(runsArg ?? 3);
  const variants = (variantsArg ?? 'measured,halve').split(',');
  console.log(`rate-limited API: ${orders} orders, ${limit}/s, ${runs} runs per variant; ${machine()}`);
  const figures = new Map<string, RunFigures[]>(variants.map((v) => [v, []]));
  for (let run = 1; run <= runs; run++) {
    for (const variant of variants) {
      const f = await oneRun(orders, limit, variant);
      figures.get(variant)!.push(f);
      console.log(
        `  run ${run} ${variant}: ${f.postsPerOrder.toFixed(3)} POSTs/order, ${(f.shareOfLimit * 100).toFixed(1)}% of ${limit}/s, ${f.answered429} answered 429, ${f.seconds.toFixed(1)} s (load ${load()})`,
      );
    }
  }
  console.log(
    '| variant | POSTs per order (median of 3) | achieved rate, % of the limit (median) | 429 answers (median) |',
  );
  console.log('|---|---|---|---|');
  for (const [variant, list] of figures) {
    const posts = median(list.map((f) => f.postsPerOrder)).toFixed(3);
    const share = (median(list.map((f) => f.shareOfLimit)) * 100).toFixed(1);
    console.log(`| ${variant} | ${posts} | ${share}% | ${median(list.map((f) => f.answered429))} |`);
  }
}

await main();
