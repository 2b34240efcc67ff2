import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { isSettled } from '../../src/batches/batchStore.js';
import { withFreshBatches } from '../helpers/redis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';

let rig: DeliveryRig | undefined;
let redisServer: PrivateRedis | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close().catch(() => undefined);
  await redisServer?.stop();
  rig = undefined;
  redisServer = undefined;
});

function batchNow(url: string, prefix: string, batchId: string) {
  return withFreshBatches(url, prefix, (batches) => batches.get(batchId));
}

async function countKeys(url: string, pattern: string): Promise<number> {
  const redis = new Redis(url);
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    count += keys.length;
  } while (cursor !== '0');
  redis.disconnect();
  return count;
}

describe('Redis faults (a private redis-server, real worker processes, the simulator)', () => {
  it('redis-server killed and restarted mid-batch with AOF: nothing lost, nothing sent twice', async () => {
    redisServer = await startPrivateRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    rig = await deliveryRig(
      'aof',
      { faults: { latencyMs: 40 } },
      { REDIS_URL: redisServer.url, BULKORDER_HTTP_DEADLINE_MS: '3000', BULKORDER_STALLED_INTERVAL_MS: '1000' },
    );
    const file = await rig.writeFile('aof.csv', ordersCsv('AOF', 60));
    const imported = await rig.importFile(file);
    expect(imported.counts.enqueued).toBe(60);
    startCli(['worker', '--concurrency', '4'], { ...rig.env, LOG_LEVEL: 'warn' });
    await waitFor(
      async () => ((await batchNow(redisServer!.url, rig!.prefix, imported.batchId))?.delivered ?? 0) >= 10,
      'ten deliveries',
    );

    await redisServer.kill();
    await new Promise((r) => setTimeout(r, 1500)); // the worker goes on without Redis for a while
    await redisServer.restart();

    await waitFor(
      async () => {
        const batch = await batchNow(redisServer!.url, rig!.prefix, imported.batchId);
        return batch !== undefined && isSettled(batch);
      },
      'the batch to settle after the restart',
      45_000,
    );
    const batch = (await batchNow(redisServer.url, rig.prefix, imported.batchId))!;
    const counters = rig.simulator.counters();
    expect(batch.dead).toBe(0);
    expect(batch.delivered + batch.held).toBe(60);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(counters.ordersAccepted).toBeGreaterThanOrEqual(batch.delivered);
    expect(counters.ordersAccepted).toBeLessThanOrEqual(batch.delivered + batch.held);
    recordReliability({
      fault: 'redis-server SIGKILLed mid-batch and restarted (AOF, fsync always)',
      behaviour: 'workers waited for Redis (their ledger writes held until it answered) and went on',
      orders: 60,
      lost: 60 - batch.delivered - batch.dead - batch.held,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 90_000);

  it('client connections dropped during enqueue: the import fails clearly, and a rerun adds no duplicates', async () => {
    redisServer = await startPrivateRedis();
    rig = await deliveryRig('drop', { faults: { latencyMs: 5 } }, { REDIS_URL: redisServer.url });
    const file = await rig.writeFile('drop.csv', ordersCsv('DROP', 3000));
    const killer = new Redis(redisServer.url);
    const first = startCli(['import', file], rig.env);
    // Drop every normal client connection, again and again, while the import runs.
    let running = true;
    void first.exited.then(() => (running = false));
    let kills = 0;
    while (running) {
      kills += Number(await killer.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      await new Promise((r) => setTimeout(r, 15));
    }
    const firstExit = await first.exited;
    killer.disconnect();
    expect(kills).toBeGreaterThan(0);
    const reserved = await countKeys(redisServer.url, `${rig.prefix}:ledger:*`);

    // Whatever the first run did (failed part-way or finished), a rerun completes the file without duplicates.
    const rerun = startCli(['import', file], rig.env);
    // What the first run queued is pending in its batch: not done yet, so exit 4 naming it (0 if it queued nothing).
    const rerunExit = await rerun.exited;
    if (reserved > 0) {
      expect(rerunExit, rerun.output()).toBe(4);
      expect(rerun.output()).toMatch(/PENDING: \d+ order\(s\) of this file are queued by another batch/);
    } else expect(rerunExit, rerun.output()).toBe(0);
    startCli(['worker', '--concurrency', '20'], { ...rig.env, LOG_LEVEL: 'warn' });
    await waitFor(async () => rig!.simulator.counters().ordersAccepted >= 3000, 'all 3000 orders delivered', 60_000);
    await new Promise((r) => setTimeout(r, 500));
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(3000);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    // The first run stopped with the infrastructure exit code and a clear message, part-way through.
    expect(firstExit).toBe(5);
    // Depending on where the drop caught it: while connecting, or part-way through.
    expect(first.output()).toMatch(
      /bulkorder: (the connection to Redis was lost .*Run the same command again|Redis does not answer at)/,
    );
    expect(reserved).toBeLessThan(3000);
    recordReliability({
      fault: 'Redis client connections dropped during enqueue',
      behaviour: 'import stopped with exit 5 and what to do; the rerun finished the file',
      orders: 3000,
      lost: 3000 - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 120_000);

  it('Redis paused longer than the job lock: jobs whose lock lapsed are not re-posted blindly', async () => {
    redisServer = await startPrivateRedis();
    rig = await deliveryRig(
      'pause',
      { faults: { latencyMs: 200 } },
      { REDIS_URL: redisServer.url, BULKORDER_HTTP_DEADLINE_MS: '1000', BULKORDER_STALLED_INTERVAL_MS: '1000' },
    );
    const file = await rig.writeFile('pause.csv', ordersCsv('PAUSE', 40));
    const imported = await rig.importFile(file);
    startCli(['worker', '--concurrency', '4'], { ...rig.env, LOG_LEVEL: 'warn' });
    await waitFor(
      async () => ((await batchNow(redisServer!.url, rig!.prefix, imported.batchId))?.delivered ?? 0) >= 4,
      'four deliveries',
    );
    // The job lock is the request deadline + 5 s = 6 s; pause every client for 8 s.
    const pauser = new Redis(redisServer.url);
    await pauser.call('CLIENT', 'PAUSE', '8000', 'ALL');
    pauser.disconnect();

    await waitFor(
      async () => {
        const batch = await batchNow(redisServer!.url, rig!.prefix, imported.batchId);
        return batch !== undefined && isSettled(batch);
      },
      'the batch to settle after the pause',
      60_000,
    );
    const batch = (await batchNow(redisServer.url, rig.prefix, imported.batchId))!;
    const counters = rig.simulator.counters();
    expect(batch.dead).toBe(0);
    expect(batch.delivered + batch.held).toBe(40);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(counters.ordersAccepted).toBeLessThanOrEqual(batch.delivered + batch.held);
    recordReliability({
      fault: 'Redis paused (CLIENT PAUSE) for 8 s, longer than the 6 s job lock',
      behaviour: 'lapsed jobs came back as stalled; the ledger let none be posted twice',
      orders: 40,
      lost: 40 - batch.delivered - batch.dead - batch.held,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 90_000);
});
