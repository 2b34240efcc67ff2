/**
 * Issue 26's rate-limited API: 2,000 orders (default) delivered by two workers (concurrency 20 each,
 * in this process, the real BullMQ/Redis/undici path) to the simulator with its rate-limit fault (a
 * sliding window of 50 requests a second, 429 with Retry-After: 1 above it). Reports, per variant,
 * the POSTs per order and the achieved rate (orders over the first-to-last delivery span) as a share
 * of the limit; the median of 3 runs. Variants run interleaved in one process, so they share the load:
 *
 *   npx tsx bench/rateLimitBench.ts [orders=2000] [limit=50] [runs=3] [variants=measured,halve]
 *
 * Issue 37's changing limit (`change`): the limit drops or rises mid-run (default 50 -> 10 and
 * 10 -> 200 req/s). The change comes once the API has stored ten seconds' worth of orders at the
 * old limit (the rate has settled there); reported per change: the POSTs per order delivered in the
 * 20 s after it, the seconds until the orders stored over one second first reach 80% of the new
 * limit, and the achieved rate over seconds 10-20 after it (goal: >= 80% within 20 s, <= 1.2 POSTs
 * per order, both ways):
 *
 *   npx tsx bench/rateLimitBench.ts change [changes=50:10,10:200] [runs=3] [variants=halve,measured]
 *
 * `measured` (BULKORDER_RATE_ADAPT=measured, the default): after the first 429 the rate starts just
 * below the rate the API accepted over the last second, and probes slowly near the rate of the last
 * 429; `halve`: half of what the workers were sending, constant growth (the rule before). Both pace
 * only the records a retried chunk may still send (the fix of a lost slot; the code before paced the
 * whole chunk). Redis: REDIS_URL or 127.0.0.1:6379, under a fresh
 * prefix deleted after each run.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { redisPrefix } from '../src/config.js';
import type { Services } from '../src/services.js';
import type { OrderPayload } from '../src/ingest/types.js';
import { startSimulator } from '../src/simulator/index.js';
import { startBusinessDelivery } from '../src/assembly/startWorkers.js';
import { importAndFollow } from '../src/importer/importAndFollow.js';
import { deleteKeysUnder } from '../src/redis.js';
import { load, machine, median } from './lib/benchStats.js';
import { openInProcessRun } from './lib/inProcessRun.js';

const HEADER =
  'orderRef,businessCustomerId,firstName,lastName,street,streetNumber,postalCode,city,countryCode,languageCode,email,telephoneNumber,productId,quantity';

interface RunFigures {
  postsPerOrder: number;
  shareOfLimit: number;
  answered429: number;
  seconds: number;
}

/** A limit that changes mid-run: from `from` to `to` requests a second. */
interface LimitChange {
  from: number;
  to: number;
}

/** What a run with a changing limit shows in the 20 s after the change. */
interface ChangeFigures {
  /** POSTs per order stored in the 20 s after the change. */
  postsPerOrder: number;
  /** Seconds from the change until the orders stored over one second first reach 80% of the new limit; NaN: never. */
  secondsTo80: number;
  /** Orders stored per second over seconds 10-20 after the change, as a share of the new limit. */
  shareOfLimit: number;
  answered429: number;
}

/** 20 s: the issue's window after a change. */
const AFTER_CHANGE_MS = 20_000;

const silent = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

async function oneRun(orders: number, limit: number, variant: string): Promise<RunFigures> {
  return (await deliverUnderLimit(orders, limit, variant)).figures;
}

/**
 * Delivers `orders` under the simulator's limit (`limit`, or `change.from` changed to `change.to`
 * once ten seconds' worth of orders at the old limit are stored).
 */
async function deliverUnderLimit(
  orders: number,
  limit: number,
  variant: string,
  change?: LimitChange,
): Promise<{ figures: RunFigures; change?: ChangeFigures }> {
  const simulator = await startSimulator({ seed: 1, faults: { rateLimitPerSecond: change?.from ?? limit } });
  const { config, logger, services, dir, prefix } = await openInProcessRun(simulator.url, 'rate', {
    BULKORDER_RATE_ADAPT: variant,
  });
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
    const watch = change === undefined ? undefined : watchChange(simulator, change);
    const outcome = await importAndFollow(
      file,
      { force: false },
      { services, logger },
      {
        wait: true,
        timeoutMs: 600_000,
        out: silent,
      },
    );
    const seconds = (Date.now() - started) / 1000;
    trace?.stop();
    const changed = watch?.stop();
    const counters = simulator.counters();
    if (outcome.batch?.delivered !== orders || counters.duplicateOrdersAccepted !== 0)
      throw new Error(`run did not deliver each order once: ${JSON.stringify(outcome.batch)}`);
    const times = simulator.orders().map((o) => Date.parse(o.receivedAt));
    const span = (Math.max(...times) - Math.min(...times)) / 1000;
    const figures = {
      postsPerOrder: counters.apiRequests.business / orders,
      shareOfLimit: orders / span / limit,
      answered429: counters.statuses['429'] ?? 0,
      seconds,
    };
    if (change === undefined) return { figures };
    if (changed === undefined) throw new Error(`the limit never changed: ${JSON.stringify(counters)}`);
    return { figures, change: changeFigures(times, changed, change.to) };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await deleteKeysUnder(services.redis, prefix);
    await services.close();
    await simulator.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The counters at the change and 20 s after it (or at the run's end, when sooner). */
interface ChangeMarks {
  at: number;
  posts: [number, number];
  stored: [number, number];
  limited: [number, number];
}

/** Changes the limit once ten seconds' worth of orders at the old one are stored; marks the counters then and 20 s on. */
function watchChange(
  simulator: Awaited<ReturnType<typeof startSimulator>>,
  change: LimitChange,
): { stop(): ChangeMarks | undefined } {
  let marks: ChangeMarks | undefined;
  let closed = false;
  const mark = (): [number, number, number] => {
    const c = simulator.counters();
    return [c.apiRequests.business, c.ordersAccepted, c.statuses['429'] ?? 0];
  };
  const close = (): void => {
    if (marks === undefined || closed) return;
    closed = true;
    const [posts, stored, limited] = mark();
    marks.posts[1] = posts;
    marks.stored[1] = stored;
    marks.limited[1] = limited;
  };
  const timer = setInterval(() => {
    if (marks !== undefined) {
      if (Date.now() - marks.at >= AFTER_CHANGE_MS) close();
      return;
    }
    if (simulator.counters().ordersAccepted < change.from * 10) return;
    simulator.setFaults({ rateLimitPerSecond: change.to });
    const [posts, stored, limited] = mark();
    marks = { at: Date.now(), posts: [posts, posts], stored: [stored, stored], limited: [limited, limited] };
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      close();
      return marks;
    },
  };
}

/** The figures of the 20 s after a change, from the counters marked and the orders' arrival times. */
function changeFigures(times: number[], marks: ChangeMarks, limit: number): ChangeFigures {
  const after = times.filter((t) => t >= marks.at && t < marks.at + AFTER_CHANGE_MS).sort((a, b) => a - b);
  let secondsTo80 = Number.NaN;
  // The first order whose last second (it included) holds 80% of the new limit.
  for (let i = 0, first = 0; i < after.length; i++) {
    while (after[first]! <= after[i]! - 1000) first++;
    if (i - first + 1 >= 0.8 * limit) {
      secondsTo80 = (after[i]! - marks.at) / 1000;
      break;
    }
  }
  const late = after.filter((t) => t >= marks.at + 10_000).length;
  const stored = marks.stored[1] - marks.stored[0];
  return {
    postsPerOrder: stored === 0 ? Number.NaN : (marks.posts[1] - marks.posts[0]) / stored,
    secondsTo80,
    shareOfLimit: late / 10 / limit,
    answered429: marks.limited[1] - marks.limited[0],
  };
}

/** `change` runs: each change (from:to) per variant, interleaved; the median of `runs`. */
async function changeRuns(changesArg: string | undefined, runs: number, variants: string[]): Promise<void> {
  const changes = (changesArg ?? '50:10,10:200').split(',').map((pair) => {
    const [from, to] = pair.split(':').map(Number);
    if (!(from! > 0 && to! > 0)) throw new Error(`a change is from:to requests a second, not ${pair}`);
    return { from: from!, to: to! };
  });
  console.log(`changing limit: ${changes.map((c) => `${c.from} -> ${c.to}/s`).join(', ')}, ${runs} runs; ${machine()}`);
  const figures = new Map<string, ChangeFigures[]>();
  for (let run = 1; run <= runs; run++) {
    for (const change of changes) {
      for (const variant of variants) {
        // Ten seconds at the old limit, then enough for 25 s at the new one.
        const orders = change.from * 12 + change.to * 25;
        const f = (await deliverUnderLimit(orders, change.to, variant, change)).change!;
        const name = `${change.from} -> ${change.to}/s, ${variant}`;
        figures.set(name, [...(figures.get(name) ?? []), f]);
        console.log(
          `  run ${run} ${name}: ${f.postsPerOrder.toFixed(3)} POSTs/order in 20 s, 80% of the limit after ${f.secondsTo80.toFixed(1)} s, ${(f.shareOfLimit * 100).toFixed(1)}% over s 10-20, ${f.answered429} answered 429 (load ${load()})`,
        );
      }
    }
  }
  console.log(
    '| change, variant | POSTs per order in the 20 s after (median) | s to 80% of the new limit (median) | % of the limit over s 10-20 (median) | 429 answers in the 20 s (median) |',
  );
  console.log('|---|---|---|---|---|');
  for (const [name, list] of figures) {
    const m = (of: (f: ChangeFigures) => number): number => median(list.map(of));
    console.log(
      `| ${name} | ${m((f) => f.postsPerOrder).toFixed(3)} | ${m((f) => f.secondsTo80).toFixed(1)} | ${(m((f) => f.shareOfLimit) * 100).toFixed(1)}% | ${m((f) => f.answered429)} |`,
    );
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
        `    +${now.ok - last.ok} ok, +${now.limited - last.limited} 429, rate ${Number(rate.rate ?? 0).toFixed(1)}, cuts ${rate.cuts ?? 0}, hint ${Number(rate.hint ?? 0).toFixed(1)}, jobs ${JSON.stringify(jobs)}`,
      );
      last = now;
    })();
  }, 1000);
  return { stop: () => clearInterval(timer) };
}

async function main(): Promise<void> {
  if (process.argv[2] === 'change') {
    const [changesArg, runsArg, variantsArg] = process.argv.slice(3);
    await changeRuns(changesArg, Number(runsArg ?? 3), (variantsArg ?? 'halve,measured').split(','));
    return;
  }
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
