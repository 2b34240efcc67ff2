/**
 * Issue 36's promise: a good batch beside a bad one goes as fast as alone. Delivers a good batch of
 * 200 orders (default) alone, then beside a batch of 2,000 (default) that names a product the
 * simulator's catalogue does not sell (422 PRODUCT_UNKNOWN), imported first; one worker (concurrency
 * 20, in this process, the real BullMQ/Redis/undici path). Reports, per run, the good batch's seconds
 * from its import to its last delivery in each setting, their ratio (the issue asks at most 1.5x), and
 * the POSTs the bad batch cost (its canary of BULKORDER_CANARY_ORDERS, 20, and what was in flight);
 * the median of the runs. The settings run interleaved, so they share the machine's load:
 *
 *   npx tsx bench/canaryBench.ts [good=200] [bad=2000] [runs=3]
 *
 * Redis: REDIS_URL or 127.0.0.1:6379, under a fresh prefix deleted after each run.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { redisPrefix } from '../src/config.js';
import { startSimulator } from '../src/simulator/index.js';
import { startBusinessDelivery } from '../src/assembly/startWorkers.js';
import { importFile } from '../src/importer/importFile.js';
import { deleteKeysUnder } from '../src/redis.js';
import { load, machine, median } from './lib/benchStats.js';
import { openInProcessRun } from './lib/inProcessRun.js';

const HEADER =
  'orderRef,businessCustomerId,firstName,lastName,street,streetNumber,postalCode,city,countryCode,languageCode,email,telephoneNumber,productId,quantity';
const UNKNOWN_PRODUCT = 9999;

function csv(prefix: string, count: number, productId: number): string {
  const rows = Array.from(
    { length: count },
    (_, i) =>
      `${prefix}-${i + 1},${1001 + (i % 3)},Anna,de Vries,Keizersgracht,12,1015 CX,Amsterdam,NL,nl,anna.${prefix.toLowerCase()}${i}@example.nl,+31612345678,${productId},1`,
  );
  return [HEADER, ...rows].join('\n') + '\n';
}

/** Seconds from the good batch's import to its last order delivered; and the bad batch's POSTs. */
async function oneRun(good: number, bad: number): Promise<{ seconds: number; badPosts: number }> {
  const simulator = await startSimulator({ seed: 1 });
  const { config, logger, services, dir, prefix } = await openInProcessRun(simulator.url, 'canary');
  const worker = await startBusinessDelivery(config, logger, {
    prefix: redisPrefix(config),
    delivery: { ...config.delivery, concurrency: 20 },
  });
  try {
    const deps = services.pipeline(logger);
    if (bad > 0) {
      const badFile = join(dir, 'bad.csv');
      await writeFile(badFile, csv('BAD', bad, UNKNOWN_PRODUCT));
      await importFile(badFile, { force: false }, deps);
    }
    const goodFile = join(dir, 'good.csv');
    await writeFile(goodFile, csv('GOOD', good, 5001));
    const started = Date.now();
    const { batchId } = await importFile(goodFile, { force: false }, deps);
    for (;;) {
      const batch = await services.batches.get(batchId);
      if (batch !== undefined && batch.delivered + batch.dead + batch.held >= good) {
        if (batch.delivered !== good)
          throw new Error(`the good batch did not deliver in full: ${JSON.stringify(batch)}`);
        break;
      }
      if (Date.now() - started > 600_000) throw new Error('the good batch did not end within 10 minutes');
      await sleep(20);
    }
    const seconds = (Date.now() - started) / 1000;
    return { seconds, badPosts: simulator.counters().errors.PRODUCT_UNKNOWN ?? 0 };
  } finally {
    await worker.close();
    await deleteKeysUnder(services.redis, prefix);
    await services.close();
    await simulator.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [goodArg, badArg, runsArg] = process.argv.slice(2);
  const good = Number(goodArg ?? 200);
  const bad = Number(badArg ?? 2000);
  const runs = Number(runsArg ?? 3);
  console.log(`a good batch of ${good} alone and beside a bad batch of ${bad}, ${runs} runs; ${machine()}`);
  const alone: number[] = [];
  const beside: number[] = [];
  const posts: number[] = [];
  for (let run = 1; run <= runs; run++) {
    const a = await oneRun(good, 0);
    const b = await oneRun(good, bad);
    alone.push(a.seconds);
    beside.push(b.seconds);
    posts.push(b.badPosts);
    console.log(
      `  run ${run}: alone ${a.seconds.toFixed(2)} s, beside the bad batch ${b.seconds.toFixed(2)} s (${(b.seconds / a.seconds).toFixed(2)}x); the bad batch cost ${b.badPosts} POSTs (load ${load()})`,
    );
  }
  const ratio = median(beside) / median(alone);
  console.log(
    `median: alone ${median(alone).toFixed(2)} s, beside ${median(beside).toFixed(2)} s: ${ratio.toFixed(2)}x (the issue asks <= 1.5x); the bad batch ${median(posts)} POSTs of ${bad}`,
  );
}

await main();
