/**
 * Issue 26 item 5, the worker's side: a Redis that starts evicting mid-run, and one that fills up
 * (noeviction at maxmemory: every write refused with OOM). A private redis-server, the real worker
 * (BullMQ, ioredis) in this process, the simulator as the API.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { isSettled } from '../../src/batches/batchStore.js';
import { withFreshBatches } from '../helpers/redis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { waitFor } from '../helpers/cliProcess.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { runCli } from '../helpers/runCli.js';
import { dashboardApp } from '../../src/dashboard/dashboardApp.js';
import { openDashboardState } from '../../src/dashboard/dashboardState.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { createLogger } from '../../src/logger.js';
import { Writable } from 'node:stream';

let rig: DeliveryRig | undefined;
let redisServer: PrivateRedis | undefined;
let admin: Redis | undefined;
let closeDashboard: (() => Promise<void>) | undefined;
let closeWorker: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeWorker?.();
  closeWorker = undefined;
  await closeDashboard?.();
  closeDashboard = undefined;
  // Whatever the test left it at: the rig's cleanup must be able to write.
  await admin?.config('SET', 'maxmemory', '0').catch(() => undefined);
  admin?.disconnect();
  await rig?.close().catch(() => undefined);
  await redisServer?.stop();
  rig = undefined;
  redisServer = undefined;
  admin = undefined;
});

function batchNow(url: string, prefix: string, batchId: string) {
  return withFreshBatches(url, prefix, (batches) => batches.get(batchId));
}

async function settled(url: string, prefix: string, batchId: string, what: string): Promise<void> {
  await waitFor(
    async () => {
      const batch = await batchNow(url, prefix, batchId);
      return batch !== undefined && isSettled(batch);
    },
    what,
    90_000,
  );
}

/** How many commands Redis refused with OOM since it started (INFO errorstats). */
async function oomReplies(redis: Redis): Promise<number> {
  return Number(/^errorstat_OOM:count=(\d+)/m.exec(await redis.info('errorstats'))?.[1] ?? '0');
}

/** Sets maxmemory just below what Redis uses, then waits until the API has accepted `answers` more orders and Redis has refused a write; returns the API's count when Redis filled. */
async function fillRedis(admin: Redis, rig: DeliveryRig, answers: number): Promise<number> {
  // Filled while that many requests are in flight: their answers come while Redis is full. Filled between two
  // waves (a busy machine), the next claims would be refused and no answer would come at all.
  await waitFor(() => rig.simulator.counters().inFlight >= answers, `${answers} requests in flight`);
  const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))?.[1]);
  await admin.config('SET', 'maxmemory', String(Math.max(1, used - 64 * 1024)));
  const acceptedAtOom = rig.simulator.counters().ordersAccepted;
  await waitFor(
    () => rig.simulator.counters().ordersAccepted >= acceptedAtOom + answers,
    'answers accepted while Redis is full',
  );
  await waitFor(async () => (await oomReplies(admin)) > 0, 'Redis to refuse writes');
  return acceptedAtOom;
}

describe('a Redis that evicts or fills while the worker runs', () => {
  it('eviction switched on mid-run: the worker stops taking jobs; switched off, all delivered once', async () => {
    redisServer = await startPrivateRedis(['--maxmemory-policy', 'noeviction', '--appendonly', 'yes']);
    admin = new Redis(redisServer.url);
    rig = await deliveryRig('evict', { faults: { latencyMs: 30 } }, { REDIS_URL: redisServer.url });
    const orders = 300;
    const imported = await rig.importFile(await rig.writeFile('evict.csv', ordersCsv('EVICT', orders)));
    expect(imported.counts.enqueued).toBe(orders);
    const worker = await rig.startWorker({ concurrency: 4, redisCheck: { everyMs: 100, unverifiable: 'run' } });
    // A dashboard running since before: its overview shows a banner while Redis evicts.
    const dashboard = await openDashboardState(rig.config, rig.logger);
    closeDashboard = () => dashboard.close();
    const app = dashboardApp(dashboard, { readOnly: true, shuttingDown: () => false });
    expect(await (await app.request('/')).text()).not.toContain('data-test="redis-unsafe"');
    await waitFor(() => rig!.simulator.counters().ordersAccepted >= 20, 'twenty deliveries');

    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await waitFor(() => worker.worker.isPaused(), 'the guard to pause the worker');
    // Jobs in flight finish; then nothing more is taken while Redis evicts.
    await waitFor(
      async () => (await rig!.services.queue.getJobCounts('active')).active === 0,
      'the jobs in flight to end',
    );
    const whilePaused = rig.simulator.counters().ordersAccepted;
    await new Promise((r) => setTimeout(r, 1000)); // ten looks of the guard
    expect(rig.simulator.counters().ordersAccepted).toBe(whilePaused);
    expect(whilePaused).toBeLessThan(orders);
    // `status` says so (text and --json) instead of refusing to read an evicting Redis.
    const text = await runCli(['status'], rig.env);
    expect(text.code, text.output).toBe(0);
    expect(text.stdout).toMatch(/REDIS UNSAFE \(REDIS_EVICTION_POLICY\): .*allkeys-lru.*Workers take no jobs/);
    const json = await runCli(['status', '--json'], rig.env);
    expect(JSON.parse(json.stdout).redis).toMatchObject({ unsafe: true, code: 'REDIS_EVICTION_POLICY' });
    const overview = await (await app.request('/')).text();
    expect(overview).toMatch(/data-test="redis-unsafe"><strong>Redis is unsafe for orders \(REDIS_EVICTION_POLICY\)/);

    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await settled(redisServer.url, rig.prefix, imported.batchId, 'the batch to settle once Redis is safe');
    const batch = (await batchNow(redisServer.url, rig.prefix, imported.batchId))!;
    const counters = rig.simulator.counters();
    expect(worker.worker.isPaused()).toBe(false);
    expect(batch.delivered).toBe(orders);
    expect(batch.held + batch.dead).toBe(0);
    expect(counters.ordersAccepted).toBe(orders);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'Redis switched to maxmemory-policy allkeys-lru mid-run, later back to noeviction',
      behaviour: `the worker's guard paused taking jobs (in-flight finished; ${orders - whilePaused} orders waited) and resumed once Redis was safe`,
      orders,
      lost: orders - batch.delivered - batch.dead - batch.held,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 120_000);

  it('Redis full (OOM) mid-run: every order the API accepted ends delivered once Redis takes writes again', async () => {
    redisServer = await startPrivateRedis(['--maxmemory-policy', 'noeviction', '--appendonly', 'yes']);
    admin = new Redis(redisServer.url);
    // Slow answers, so that requests are in flight when Redis fills: their settles meet the OOM.
    rig = await deliveryRig('oom', { faults: { latencyMs: 400 } }, { REDIS_URL: redisServer.url });
    const orders = 200;
    const imported = await rig.importFile(await rig.writeFile('oom.csv', ordersCsv('OOM', orders)));
    expect(imported.counts.enqueued).toBe(orders);
    // The worker's own log: the refusal is said once, then summarised, never once per settle.
    let logText = '';
    const logger = createLogger({
      level: 'warn',
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          logText += chunk.toString();
          done();
        },
      }),
    });
    const worker = await startBusinessDelivery(rig.config, logger, {
      prefix: rig.prefix,
      delivery: { ...rig.config.delivery, concurrency: 20 },
    });
    closeWorker = () => worker.close();
    // Past the batch's canary (its first 20 orders; the rest go once it is judged): requests are in flight.
    await waitFor(() => rig!.simulator.counters().ordersAccepted >= 40, 'forty deliveries');

    // Full until answers that came in meanwhile were refused: the case an order must not be held for.
    await fillRedis(admin, rig, 5);
    // A command meets the same refusal: Redis unavailable, exit 5, and --json still ends with one object.
    const importer = await runCli(['import', await rig.writeFile('more.csv', ordersCsv('MORE', 5)), '--json'], rig.env);
    expect(importer.code, importer.output).toBe(5);
    expect(importer.stderr).toMatch(/Redis is out of memory and refuses writes/);
    expect(importer.stderr).toMatch(/OOM command not allowed/);
    expect(JSON.parse(importer.stdout)).toMatchObject({ refused: { code: 'REDIS_UNAVAILABLE' }, exitCode: 5 });
    const refused = await oomReplies(admin);
    await admin.config('SET', 'maxmemory', '0');

    await settled(redisServer.url, rig.prefix, imported.batchId, 'the batch to settle once Redis takes writes');
    const batch = (await batchNow(redisServer.url, rig.prefix, imported.batchId))!;
    const counters = rig.simulator.counters();
    expect(refused).toBeGreaterThan(0);
    const said = logText.split('\n').filter((line) => line.includes('Redis refuses to record answers the API gave'));
    // Said at most once per kind, never once per settle (claims and the batch's gate may meet the OOM before any settle does).
    expect(said.length).toBeLessThan(refused);
    if (said.length > 0) expect(said[0]).toMatch(/OOM command not allowed/);
    expect(batch.held).toBe(0);
    expect(batch.dead).toBe(0);
    expect(batch.delivered).toBe(orders);
    expect(counters.ordersAccepted).toBe(orders);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'Redis full mid-run (noeviction at maxmemory: writes refused with OOM), then given memory',
      behaviour: `answers the API gave meanwhile were recorded as delivered once Redis took writes (${refused} OOM replies)`,
      orders,
      lost: orders - batch.delivered - batch.dead - batch.held,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 120_000);

  it('a worker stopped while Redis is full records the answers it holds above maxmemory: none held', async () => {
    redisServer = await startPrivateRedis(['--maxmemory-policy', 'noeviction', '--appendonly', 'yes']);
    admin = new Redis(redisServer.url);
    // A short job lock (deadline + 5 s), so the stopped worker's jobs come back soon as stalled.
    rig = await deliveryRig(
      'oom-stop',
      { faults: { latencyMs: 400 } },
      { REDIS_URL: redisServer.url, BULKORDER_HTTP_DEADLINE_MS: '2000', BULKORDER_STALLED_INTERVAL_MS: '1000' },
    );
    const orders = 150;
    const imported = await rig.importFile(await rig.writeFile('stop.csv', ordersCsv('STOP', orders)));
    const first = await rig.startWorker({ concurrency: 20, shutdownGraceMs: 1500 });
    await waitFor(() => rig!.simulator.counters().ordersAccepted >= 20, 'twenty deliveries');
    const acceptedAtOom = await fillRedis(admin, rig, 3);
    // SIGTERM's path while Redis is still full: the grace period ends with settles refused.
    await first.close();
    const ledgerDelivered = await withFreshBatches(redisServer.url, rig.prefix, (b) => b.get(imported.batchId));
    await admin.config('SET', 'maxmemory', '0');

    await rig.startWorker({ concurrency: 20 });
    await settled(redisServer.url, rig.prefix, imported.batchId, 'the batch to settle under a new worker');
    const batch = (await batchNow(redisServer.url, rig.prefix, imported.batchId))!;
    const counters = rig.simulator.counters();
    expect(ledgerDelivered!.delivered).toBeGreaterThanOrEqual(acceptedAtOom + 10);
    expect(batch.held).toBe(0);
    expect(batch.dead).toBe(0);
    expect(batch.delivered).toBe(orders);
    expect(counters.ordersAccepted).toBe(orders);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'worker stopped (grace period over) while Redis is full, then Redis given memory and a new worker started',
      behaviour:
        'the stopping worker wrote the answers it held above maxmemory (allow-oom script); none held as outcome unknown',
      orders,
      lost: orders - batch.delivered - batch.dead - batch.held,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 120_000);
});
