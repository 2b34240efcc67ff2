import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { startPrivateRedis } from '../helpers/privateRedis.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

/** Follows a batch until it settles or `timeoutMs` passes, quietly, every 100 ms. */
function follow(r: DeliveryRig, batchId: string, timeoutMs: number) {
  return followBatch(r.services.batches, batchId, { pollMs: 100, timeoutMs, out: quiet });
}

async function importOrders(r: DeliveryRig, name: string, count: number) {
  const file = await r.writeFile(`${name}.csv`, ordersCsv(name, count));
  return r.importFile(file);
}

describe('worker processes (the real CLI, real Redis, the simulator)', () => {
  // A token outlives the batch (the default hour): one request in all, counted by the API, on a machine of any speed.
  // Refreshing once per lifetime is test/delivery/tokenProvider.test.ts's, on a clock of its own.
  it('two worker processes share one token: one token request for both', async () => {
    rig = await deliveryRig('twoproc', { faults: { latencyMs: 25 } });
    const workerEnv = { ...rig.env, BULKORDER_CONCURRENCY: '4', LOG_LEVEL: 'info' };
    const workers = [startCli(['worker'], workerEnv), startCli(['worker'], workerEnv)];
    // Both ready before the orders come: on a loaded machine one started late found nothing left to deliver.
    for (const worker of workers)
      await waitFor(() => worker.output().includes('delivery worker started'), 'both workers to start', 40_000);
    const imported = await importOrders(rig, 'TOKEN', 240);
    const { batch, settled } = await follow(rig, imported.batchId, 45_000);
    expect(settled).toBe(true);
    expect(batch.delivered).toBe(240);

    const counters = rig.simulator.counters();
    expect(counters.duplicateOrdersAccepted).toBe(0);
    // Both processes delivered (so both needed tokens) ...
    // (at info a chunk job logs one `chunk done` line; its orders' `delivered` lines are at debug)
    for (const worker of workers) expect(worker.output().match(/"msg":"chunk done"/g)?.length ?? 0).toBeGreaterThan(0);
    // ... and one token served both: without the shared cache each process fetches its own.
    expect(counters.tokenRequests.business).toBe(1);
    expect(counters.tokensIssued.business).toBe(1);
  }, 60_000);

  it('a worker killed with SIGKILL mid-batch loses nothing and posts nothing blindly', async () => {
    rig = await deliveryRig(
      'sigkill',
      { faults: { latencyMs: 300 } },
      { BULKORDER_HTTP_DEADLINE_MS: '2000', BULKORDER_STALLED_INTERVAL_MS: '1000' },
    );
    const workerEnv = { ...rig.env, BULKORDER_CONCURRENCY: '5', LOG_LEVEL: 'warn' };
    const first = startCli(['worker'], workerEnv);
    const imported = await importOrders(rig, 'KILL', 30);
    await waitFor(
      async () => ((await rig!.services.batches.get(imported.batchId))?.delivered ?? 0) >= 5,
      'five deliveries',
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    startCli(['worker'], workerEnv);
    const { batch, settled } = await follow(rig, imported.batchId, 40_000);
    expect(settled).toBe(true);
    expect(batch.dead).toBe(0);
    expect(batch.delivered + batch.held).toBe(30);

    const counters = rig.simulator.counters();
    expect(counters.duplicateOrdersAccepted).toBe(0);
    // Every delivered order reached the API once; a held one may or may not have (it was in flight).
    expect(counters.ordersAccepted).toBeGreaterThanOrEqual(batch.delivered);
    expect(counters.ordersAccepted).toBeLessThanOrEqual(batch.delivered + batch.held);
    recordReliability({
      fault: 'worker SIGKILLed with requests in flight; another started',
      behaviour: 'stalled jobs came back; orders found sending were held, never re-posted blindly',
      orders: 30,
      lost: 30 - batch.delivered - batch.dead - batch.held,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 60_000);

  // BullMQ fails a job whose workers died holding it more than maxStalledCount times; what it never sent was then
  // dead-lettered (JOB_FAILED), for a person to send again, though only its workers had failed (it was 2).
  it.each([
    { maxStalls: undefined, setting: 'default, 5', kills: 3, end: { delivered: 4, held: 6, dead: 0 } },
    { maxStalls: '1', setting: '1', kills: 2, end: { delivered: 0, held: 4, dead: 6 } },
  ])(
    'a chunk whose worker is SIGKILLed mid-send $kills times (BULKORDER_MAX_STALLS $setting): each kill holds what was in flight; the records never sent are delivered, or dead-lettered once the job stalled too often',
    async ({ maxStalls, kills, end }) => {
      rig = await deliveryRig(
        'stalls',
        { faults: { latencyMs: 400 } },
        {
          BULKORDER_HTTP_DEADLINE_MS: '1000',
          BULKORDER_STALLED_INTERVAL_MS: '500',
          BULKORDER_ORDERS_PER_JOB: '10',
          ...(maxStalls === undefined ? {} : { BULKORDER_MAX_STALLS: maxStalls }),
        },
      );
      // Two requests at a time: a kill catches two records in flight and leaves the rest of the chunk unsent.
      const workerEnv = { ...rig.env, BULKORDER_CONCURRENCY: '2', LOG_LEVEL: 'warn' };
      const imported = await importOrders(rig, 'STALL', 10);
      const sent = () => rig!.simulator.counters().apiRequests.business;
      for (let kill = 1; kill <= kills; kill++) {
        const worker = startCli(['worker'], workerEnv);
        // The job comes back to this worker once the killed one's lock ran out (request deadline + 5 s).
        await waitFor(() => sent() >= 2 * kill, `the wave of worker ${kill}`, 60_000);
        worker.child.kill('SIGKILL');
        expect(await worker.exited).toBe('SIGKILL');
      }
      startCli(['worker'], workerEnv);
      const { batch, settled } = await follow(rig, imported.batchId, 60_000);
      expect(settled).toBe(true);
      const counters = rig.simulator.counters();
      // Each kill cut two requests short: those may have reached the API, so they are held, never sent again.
      expect(batch).toMatchObject(end);
      expect(counters.apiRequests.business).toBe(2 * kills + end.delivered);
      expect(counters.duplicateOrdersAccepted).toBe(0);
      const dead = new ParkedStore(rig.services.redis, rig.services.keys, rig.services.ledger, 'dead');
      for await (const item of dead.scan()) expect(item.record).toMatchObject({ code: 'JOB_FAILED' });
      if (maxStalls === undefined)
        recordReliability({
          fault: 'the worker holding a chunk SIGKILLed mid-send three times in a row',
          behaviour: 'each kill held the two records in flight; the next worker sent the rest; none dead-lettered',
          orders: 10,
          lost: 10 - batch.delivered - batch.dead - batch.held,
          duplicates: counters.duplicateOrdersAccepted,
          held: batch.held,
        });
    },
    150_000,
  );

  it('SIGTERM mid-batch: requests in flight finish, nothing is held, and the next worker delivers the rest', async () => {
    rig = await deliveryRig('sigterm', { faults: { latencyMs: 300 } }, { BULKORDER_STALLED_INTERVAL_MS: '1000' });
    const workerEnv = { ...rig.env, BULKORDER_CONCURRENCY: '5', LOG_LEVEL: 'warn' };
    const first = startCli(['worker'], workerEnv);
    const imported = await importOrders(rig, 'TERM', 30);
    await waitFor(
      async () => ((await rig!.services.batches.get(imported.batchId))?.delivered ?? 0) >= 5,
      'five deliveries',
    );
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const afterStop = (await rig.services.batches.get(imported.batchId))!;
    expect(afterStop.held).toBe(0); // what was in flight finished before the exit
    expect(afterStop.delivered).toBeLessThan(30); // it stopped taking new jobs

    startCli(['worker'], workerEnv);
    const { batch, settled } = await follow(rig, imported.batchId, 40_000);
    expect(settled).toBe(true);
    expect(batch).toMatchObject({ delivered: 30, dead: 0, held: 0 });
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(30);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'worker SIGTERM mid-batch; another started',
      behaviour: 'took no new jobs, finished the requests in flight, exit 0; the next worker delivered the rest',
      orders: 30,
      lost: 30 - batch.delivered - batch.dead - batch.held,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 60_000);

  it('--processes 2: one parent forks two worker processes that deliver a file; SIGTERM to the parent ends them all', async () => {
    rig = await deliveryRig('forked', { faults: { latencyMs: 50 } }, { BULKORDER_STALLED_INTERVAL_MS: '1000' });
    const parent = startCli(['worker', '--processes', '2', '--concurrency', '2'], { ...rig.env, LOG_LEVEL: 'info' });
    // Both children ready before the orders come: on a loaded machine one started late found nothing left.
    await waitFor(
      () => parent.output().split('delivery worker started').length - 1 >= 2,
      'both worker processes to start',
      40_000,
    );
    const imported = await importOrders(rig, 'FORK', 60);
    const { batch, settled } = await follow(rig, imported.batchId, 40_000);
    expect(settled).toBe(true);
    expect(batch).toMatchObject({ delivered: 60, dead: 0, held: 0 });
    expect(rig.simulator.counters().duplicateOrdersAccepted).toBe(0);

    // The children log through the parent's stderr: both started, and both delivered.
    const lines = parent
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map(
        (line) => JSON.parse(line) as { msg: string; pid: number; childPid?: number; counts?: { delivered?: number } },
      );
    const children = lines
      .filter((line) => line.msg === 'worker process started')
      .flatMap((line) => (line.childPid === undefined ? [] : [line.childPid]));
    expect(children).toHaveLength(2);
    const deliverers = new Set(
      lines.filter((line) => line.msg === 'chunk done' && (line.counts?.delivered ?? 0) > 0).map((line) => line.pid),
    );
    expect([...deliverers].sort()).toEqual([...children].sort());

    parent.child.kill('SIGTERM');
    expect(await parent.exited).toBe(0);
    for (const pid of children) expect(isRunning(pid)).toBe(false);
  }, 60_000);

  it('SIGTERM while Redis is down: the worker ends within its grace period, with a few log lines, not hundreds of stack traces', async () => {
    rig = await deliveryRig('termdown');
    const redis = await startPrivateRedis();
    try {
      const graceMs = 3000;
      const worker = startCli(['worker'], {
        ...rig.env,
        REDIS_URL: redis.url,
        BULKORDER_SHUTDOWN_GRACE_MS: String(graceMs),
        LOG_LEVEL: 'info',
      });
      await waitFor(() => worker.output().includes('delivery worker started'), 'the worker to start', 40_000);
      await redis.kill();
      await new Promise((res) => setTimeout(res, 3000)); // reconnect attempts pile up meanwhile
      const signalled = Date.now();
      worker.child.kill('SIGTERM');
      // It ends (the process exits at 2.5 s by its own clock, shutdownBudget); how long that takes here is
      // the machine's, so the figure is recorded, not asserted.
      expect([0, 5]).toContain(await worker.exited); // 5 when it had to give up on closing cleanly
      const tookMs = Date.now() - signalled;
      const stacks = worker
        .output()
        .split('\n')
        .filter((line) => line.includes('"stack"')).length;
      expect(stacks).toBeLessThanOrEqual(3);
      // One clear line, whichever point of its start or work the signal found it at.
      expect(worker.output()).toMatch(
        /stopping while starting|stopped at the end of the grace period|could not close cleanly/,
      );
      recordReliability({
        fault: 'worker SIGTERM while Redis is down',
        behaviour: `ended ${Math.round(tookMs / 100) / 10} s after SIGTERM (grace 3 s), ${stacks} stack trace(s) logged`,
        orders: 0,
        lost: 0,
        duplicates: 0,
        held: 0,
      });
    } finally {
      await redis.stop();
    }
  }, 60_000);
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
