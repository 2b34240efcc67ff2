/**
 * Issue 37, "Ride a failover", for the long-running processes clusterFailover.test.ts does not cover:
 * the drop-folder watcher (`bulkorder watch` beside a `bulkorder worker`, the README's shape) and the
 * dashboard. A Redis Cluster of the test's own (3 masters + 3 replicas), the master of the orders' slot
 * SIGKILLed while a file is imported and delivered: the watcher keeps running and files it in done/ with
 * its results, every order reaches the API once, and a file dropped after the failover is delivered once
 * too; the dashboard stays up, answers every request during the failover (a page, or a 5xx such as 503
 * "Redis unreachable"; never a refused connection or a 4xx), and shows the batch's right counts once it is over. A failover
 * longer than BULKORDER_REDIS_FAILOVER_MAX_MS ends `watch --once` (cron) with exit 5 naming the cluster state,
 * as it ends `import`; the file stays in processing/ and the next run finishes it.
 */
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { ordersCsv } from '../helpers/deliveryRig.js';
import { startCli, waitFor } from '../helpers/cliProcess.js';
import { latestEnqueued, startClusterWorker, stopProcess, useFailoverCluster } from '../helpers/failoverRun.js';

const ORDERS = 2_000;
/** The file dropped once the failover is over. */
const LATER = 200;
/** The cluster's node timeout: a dead master's replica takes over a few seconds after it. */
const NODE_TIMEOUT_MS = 2_000;

const run = useFailoverCluster(NODE_TIMEOUT_MS);

/** The names in a folder, none if it does not exist. */
async function namesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/** Drops a file into the inbox as an upload tool does: written as `.part`, then renamed. */
async function drop(inbox: string, name: string, text: string): Promise<void> {
  await writeFile(join(inbox, `${name}.part`), text);
  await rename(join(inbox, `${name}.part`), join(inbox, name));
}

/** The `.summary.json` in done/ of the file dropped as `name` (its claimed name ends with it). */
async function doneSummary(done: string, name: string): Promise<Record<string, unknown> | undefined> {
  const summary = (await namesIn(done)).find((n) => n.endsWith(`${name}.summary.json`));
  return summary === undefined
    ? undefined
    : (JSON.parse(await readFile(join(done, summary), 'utf8')) as Record<string, unknown>);
}

/** `wait`, or its error with what the processes said and where the files are, to tell a hang from a crash. */
async function explained(wait: Promise<void>, say: () => Promise<string>): Promise<void> {
  try {
    await wait;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${await say()}`, {
      cause: error,
    });
  }
}

/** The folders of a drop folder, recursively (processing/ holds each watcher's own folder). */
async function listing(folder: string): Promise<string> {
  const lines: string[] = [];
  for (const sub of ['inbox', 'processing', 'done', 'failed']) {
    const names = await namesIn(join(folder, sub));
    const nested = await Promise.all(
      names.map(async (n) =>
        (await namesIn(join(folder, sub, n))).length > 0
          ? `${n}/[${(await namesIn(join(folder, sub, n))).join(' ')}]`
          : n,
      ),
    );
    lines.push(`${sub}/: ${nested.join(', ')}`);
  }
  return lines.join('\n');
}

describe('a Redis Cluster failover under the long-running processes (the master of the orders SIGKILLed)', () => {
  it('the drop-folder watcher keeps running: the file ends in done/ with its results, every order delivered once, a later file too', async () => {
    // Each POST answered after 20 ms: delivery of the file takes a while, so the kill lands while it is imported or delivered.
    const r = await run.rig('failover-watch', { faults: { latencyMs: 20 } });
    const folder = join(r.dir, 'drop');
    const inbox = join(folder, 'inbox');
    const done = join(folder, 'done');
    await mkdir(inbox, { recursive: true });
    const master = await run.ordersMaster(r);
    const watcher = startCli(['watch', folder, '--stable', '0.2', '--poll', '0.1'], { ...r.env, LOG_LEVEL: 'info' });
    await waitFor(() => watcher.output().includes('watching the drop folder'), 'the watcher started', 120_000);
    await drop(inbox, 'night.csv', ordersCsv('WF', ORDERS));
    await waitFor(async () => (await latestEnqueued(r)) >= 100, '100 orders of the file queued', 120_000);
    await run.kill(master);
    // The worker starts once the cluster has failed over: what this test holds is the watcher riding the
    // failover mid-import. A worker riding one mid-delivery is clusterFailover.test.ts's; a worker idle in
    // BullMQ's blocking wait on the killed master can stay wedged (BullMQ issues 4138, 3185; README "Redis Cluster").
    await run.cluster.settled(`${r.prefix}:any`);
    const worker = await startClusterWorker(r);

    const say = async (): Promise<string> =>
      `${await listing(folder)}\nsimulator: ${JSON.stringify(r.simulator.counters())}\n` +
      `watcher (exit ${String(watcher.child.exitCode)}):\n${watcher.output().slice(-6000)}\nworker:\n${worker.output().slice(-3000)}`;
    await explained(
      waitFor(async () => (await doneSummary(done, 'night.csv')) !== undefined, 'the file in done/', 300_000),
      say,
    );
    expect(watcher.child.exitCode, watcher.output().slice(-4000)).toBeNull(); // the watcher rode it
    const first = (await doneSummary(done, 'night.csv'))!;
    expect(first).toMatchObject({
      outcome: 'done',
      needsAttention: false,
      delivery: { delivered: ORDERS, dead: 0, held: 0 },
    });
    const results = (await namesIn(done)).find((n) => n.endsWith('night.csv.results.csv'));
    expect(results, (await namesIn(done)).join(', ')).toBeDefined();
    const rows = (await readFile(join(done, results!), 'utf8')).trim().split('\n');
    expect(rows).toHaveLength(ORDERS + 1); // the header and one row per order
    expect(r.simulator.counters()).toMatchObject({ ordersAccepted: ORDERS, duplicateOrdersAccepted: 0 });

    // A file dropped after the failover: taken, delivered once, filed in done/ by the same watcher.
    await run.cluster.settled(`${r.prefix}:any`);
    await drop(inbox, 'morning.csv', ordersCsv('WL', LATER));
    await explained(
      waitFor(async () => (await doneSummary(done, 'morning.csv')) !== undefined, 'the later file in done/', 300_000),
      say,
    );
    expect(await doneSummary(done, 'morning.csv')).toMatchObject({
      outcome: 'done',
      delivery: { delivered: LATER, dead: 0, held: 0 },
    });
    const counters = r.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS + LATER);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect((await namesIn(join(folder, 'failed'))).filter((n) => !n.startsWith('.'))).toEqual([]);
    expect(watcher.child.exitCode, watcher.output().slice(-4000)).toBeNull();
    expect(await stopProcess(watcher), watcher.output().slice(-4000)).toBe(0);
    expect(await stopProcess(worker), worker.output().slice(-4000)).toBe(0);
    recordReliability({
      fault: `Redis Cluster (3 masters + 3 replicas): the master of the orders' slot SIGKILLed while a drop-folder file is imported (${ORDERS} orders, >= 100 queued; the worker started after the failover), then a second file (${LATER}) dropped`,
      behaviour:
        'watch (beside a worker) kept running; both files in done/ with results and summaries, nothing in failed/; watcher and worker stopped cleanly',
      orders: ORDERS + LATER,
      lost: ORDERS + LATER - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 600_000);

  it('the dashboard stays up and answers during the failover (a page or a 5xx), then shows the batch delivered', async () => {
    const r = await run.rig('failover-dash', { faults: { latencyMs: 20 } });
    const file = await r.writeFile('day.csv', ordersCsv('DF', ORDERS));
    const imported = startCli(['import', file], { ...r.env, LOG_LEVEL: 'warn' });
    expect(await imported.exited, imported.output()).toBe(0);
    const batchId = (await r.services.batches.list(1))[0]!.id;
    const dashboard = startCli(['dashboard', '--port', '0'], { ...r.env, LOG_LEVEL: 'info' });
    await waitFor(() => /dashboard: (http:\S+)\//.test(dashboard.stdout()), 'the dashboard to listen', 120_000);
    const url = /dashboard: (http:\S+)\//.exec(dashboard.stdout())![1]!;
    const pages = ['/healthz', '/', '/batches', `/batches/${encodeURIComponent(batchId)}`];
    /** Each page's status codes as answered; a refused or broken connection fails the fetch, and the test. */
    const answered = new Map<string, Set<number>>(pages.map((page) => [page, new Set()]));
    const askAll = async (): Promise<void> => {
      for (const page of pages) {
        const response = await fetch(url + page, { signal: AbortSignal.timeout(60_000) });
        await response.text();
        answered.get(page)!.add(response.status);
      }
    };
    await askAll();
    for (const page of pages) expect([...answered.get(page)!], page).toEqual([200]);

    const master = await run.ordersMaster(r);
    const worker = await startClusterWorker(r);
    await waitFor(() => r.simulator.counters().ordersAccepted >= 300, '300 orders delivered', 120_000);
    expect(r.simulator.counters().ordersAccepted).toBeLessThan(ORDERS);
    await run.kill(master);
    // Asked over and over while the cluster fails over and the worker finishes the batch.
    let settledCluster = false;
    void run.cluster.settled(`${r.prefix}:any`).then(() => (settledCluster = true));
    await waitFor(
      async () => {
        await askAll();
        return settledCluster && r.simulator.counters().ordersAccepted >= ORDERS;
      },
      'the failover over and every order delivered',
      300_000,
    );
    expect(dashboard.child.exitCode, dashboard.output().slice(-4000)).toBeNull();
    // A 5xx while the slot has no master is fine (503 "Redis unreachable", or a command that failed); anything else is not.
    for (const page of pages)
      expect(
        [...answered.get(page)!].filter((status) => status !== 200 && status < 500),
        page,
      ).toEqual([]);

    // Over: the batch page shows every order delivered (the dashboard reads the new master), the others answer 200.
    const batchPage = `${url}/batches/${encodeURIComponent(batchId)}`;
    let html = '';
    await waitFor(
      async () => {
        const response = await fetch(batchPage);
        html = await response.text();
        return response.status === 200 && html.includes(`${ORDERS} delivered</span>`);
      },
      'the batch page to show every order delivered',
      120_000,
    );
    expect(html).toMatch(
      new RegExp(
        `<span class="ok">${ORDERS} delivered</span>, <span class="bad">0 dead-lettered</span>, <span class="warn">0 held for review</span>`,
      ),
    );
    for (const page of ['/healthz', '/', '/batches']) expect((await fetch(url + page)).status, page).toBe(200);
    const counters = r.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(await stopProcess(dashboard), dashboard.output().slice(-4000)).toBe(0);
    expect(await stopProcess(worker), worker.output().slice(-4000)).toBe(0);
    const during = pages.map((page) => `${page} ${[...answered.get(page)!].sort().join('/')}`).join(', ');
    recordReliability({
      fault: `Redis Cluster (3 masters + 3 replicas): the master of the orders' slot SIGKILLed while the dashboard is asked for its pages and a worker delivers (${ORDERS} orders, >= 300 delivered)`,
      behaviour: `dashboard stayed up and answered every request (${during}); after the failover the batch page showed ${ORDERS} delivered, 0 dead-lettered, 0 held; stopped cleanly`,
      orders: ORDERS,
      lost: ORDERS - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 600_000);

  it('longer than BULKORDER_REDIS_FAILOVER_MAX_MS: watch --once exits 5 naming the cluster state; the next run files it in done/', async () => {
    const r = await run.rig('failover-watch-limit');
    const folder = join(r.dir, 'drop');
    const inbox = join(folder, 'inbox');
    await mkdir(inbox, { recursive: true });
    await drop(inbox, 'late.csv', ordersCsv('WX', ORDERS));
    // The dead master goes unnoticed for 20 s: far beyond the watcher's 1 s limit.
    await run.cluster.setNodeTimeout(20_000);
    const master = await run.ordersMaster(r);
    const watcher = startCli(['watch', folder, '--once', '--stable', '0.2', '--poll', '0.1'], {
      ...r.env,
      LOG_LEVEL: 'warn',
      BULKORDER_REDIS_FAILOVER_MAX_MS: '1000',
    });
    await waitFor(async () => (await latestEnqueued(r)) >= 50, '50 orders of the file queued', 120_000);
    await run.kill(master);
    // A bound for a hang (it would retry the file for ever), not a speed: the dead master stays unnoticed for 20 s.
    await waitFor(() => watcher.child.exitCode !== null, 'watch --once to give up', 120_000);
    expect(await watcher.exited, watcher.output().slice(-4000)).toBe(5);
    expect(watcher.output()).toMatch(
      /the Redis Cluster \(127\.0\.0\.1:\d+.*\) did not serve this command's slot for 1 s/,
    );
    expect(watcher.output()).toMatch(/cluster_state:\w+, \d+ of 16384 slots served/);
    expect(watcher.output()).not.toMatch(/internal error/);
    // Left in processing/ (neither done nor refused): the next run resumes it.
    expect(await namesIn(join(folder, 'done'))).toEqual([]);
    expect((await namesIn(join(folder, 'failed'))).filter((n) => !n.startsWith('.'))).toEqual([]);

    // The cluster fails over (the node timeout back to 2 s); the cron run, delivering itself, finishes the file.
    await run.cluster.setNodeTimeout(NODE_TIMEOUT_MS);
    await run.cluster.settled(`${r.prefix}:any`);
    const next = startCli(['watch', folder, '--once', '--deliver', '--stable', '0.2', '--poll', '0.1'], {
      ...r.env,
      LOG_LEVEL: 'warn',
    });
    expect(await next.exited, next.output().slice(-4000)).toBe(0);
    expect(await doneSummary(join(folder, 'done'), 'late.csv')).toMatchObject({
      outcome: 'done',
      delivery: { delivered: ORDERS, dead: 0, held: 0 },
    });
    const counters = r.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: `Redis Cluster: the master of the orders' slot SIGKILLed while watch --once imports a drop-folder file (${ORDERS} orders, >= 50 queued), unnoticed for 20 s (cluster-node-timeout) against a 1 s BULKORDER_REDIS_FAILOVER_MAX_MS`,
      behaviour:
        'watch --once exit 5 REDIS_CLUSTER_DOWN naming the cluster state, the file left in processing/; after the failover watch --once --deliver resumed it: done/, exit 0',
      orders: ORDERS,
      lost: ORDERS - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 600_000);
});
