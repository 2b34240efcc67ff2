import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../src/ledger/fingerprint.js';
import { newBatchId } from '../../src/importer/importFile.js';
import { chunkJob, toChunkRecord } from '../../src/ledger/jobData.js';
import { openOrderSource } from '../../src/ingest/openOrderSource.js';
import type { ValidOrder } from '../../src/ingest/types.js';
import { chunkJobId } from '../../src/queues.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { batchesNow, rerun } from '../helpers/importRuns.js';
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

describe('reservation and queueing cannot come apart (real CLI processes, real Redis, simulator)', () => {
  it('an importer that died between reserving and queueing: a re-run at once finishes the file, exactly once, and closes the dead batch', async () => {
    rig = await deliveryRig('stranded');
    const file = await rig.writeFile('night.csv', ordersCsv('STR', 2000));
    // The dead importer, step by step: batch created, 1,000 orders reserved with their jobs kept,
    // only 500 of those jobs added, none confirmed; then nothing (its heartbeat stops).
    const source = await openOrderSource(file, {});
    const orders: ValidOrder[] = [];
    for await (const item of source.items()) if (item.kind === 'valid' && orders.length < 1000) orders.push(item);
    const deadBatch = newBatchId();
    await rig.services.batches.create({
      id: deadBatch,
      file,
      sha256: '',
      env: rig.config.env,
      columns: source.columns,
    });
    // Ten to a chunk job, as the default BULKORDER_ORDERS_PER_JOB.
    const groups: ValidOrder[][] = [];
    for (let i = 0; i < orders.length; i += 10) groups.push(orders.slice(i, i + 10));
    const ids = groups.map((_, c) => chunkJobId(deadBatch, c + 1));
    const records = groups.map((group) => group.map((order) => toChunkRecord(order, source.columns, ORDERS)));
    const layout = ORDERS.payloadCodec?.version;
    const reserved = await rig.services.ledger.reserveChunks(
      groups.map((group, c) =>
        group.map((order, i) => ({
          orderKey: order.key,
          fingerprint: fingerprintOf(order.payload),
          record: records[c]![i],
        })),
      ),
      ids,
      { name: ORDERS.jobName, layout },
      { batchId: deadBatch },
    );
    expect(reserved.flat().every((r) => r.outcome === 'reserved')).toBe(true);
    const jobs = records.map((group, c) => ({
      name: ORDERS.jobName,
      data: chunkJob(deadBatch, group, layout),
      id: ids[c]!,
    }));
    expect(jobs[0]!.data.file).toBeUndefined(); // the batch record names the file
    await rig.services.queue.addBulk(
      jobs.slice(0, 50).map(({ id, ...job }) => ({ ...job, opts: { ...rig!.services.jobOptions, jobId: id } })),
    );

    await rig.startWorker({ concurrency: 50 });
    const run = await rerun(rig, file);
    const counters = rig.simulator.counters();
    const dead = (await rig.services.batches.get(deadBatch))!;
    expect(run.exit, run.output).toBe(0);
    expect(counters.ordersAccepted).toBe(2000);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(dead.importState).toBe('interrupted');
    expect(dead).toMatchObject({ enqueued: 1000, delivered: 1000, dead: 0, held: 0 });
    recordReliability({
      fault: 'importer died after reserving 1,000 orders, having queued 500 (of 2,000)',
      behaviour:
        'the reservations kept their jobs; a reconciler queued the 500 others within seconds, closed the batch as interrupted; the re-run at once followed them and exited 0',
      orders: 2000,
      lost: 2000 - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 300_000);

  // retry: 1 — once, a kill at an unlucky moment made the first import exit 1 (an unmapped Redis error) instead of 5;
  // the cause is open (see the issue note), so a second failure in a row still fails the suite.
  it(
    'redis-server SIGKILLed mid-import and restarted (AOF): a re-run at once finishes the file exactly once',
    { timeout: 300_000 },
    async () => {
      redisServer = await startPrivateRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
      rig = await deliveryRig('rediskill', {}, { REDIS_URL: redisServer.url, BULKORDER_STALLED_INTERVAL_MS: '1000' });
      const file = await rig.writeFile('night.csv', ordersCsv('RK', 3000));
      await rig.startWorker({ concurrency: 50 });
      const importer = startCli(['import', file], { ...rig.env, LOG_LEVEL: 'warn' });
      await waitFor(
        async () => ((await batchesNow(redisServer!.url, rig!.prefix))[0]?.enqueued ?? 0) >= 1000,
        '1000 orders queued',
        60_000,
      );
      await redisServer.kill(); // no shutdown save: only what the AOF has
      await new Promise((r) => setTimeout(r, 3000)); // long enough that the importer gives up
      await redisServer.restart(); // start again on the same AOF
      const firstExit = await importer.exited;
      const run = await rerun(rig, file);
      const counters = rig.simulator.counters();
      // The dead importer's batch is closed by a reconciler once its heartbeat (10 s) lapses: the
      // re-run may finish the file before that, so the batch is given that long to be closed.
      await waitFor(
        async () => (await batchesNow(redisServer!.url, rig!.prefix)).every((b) => b.importState !== 'importing'),
        "the dead import's batch closed",
        30_000,
      ).catch(() => undefined);
      const batches = await batchesNow(redisServer.url, rig.prefix);
      const held = batches.reduce((sum, b) => sum + b.held, 0);
      expect([0, 5], importer.output()).toContain(firstExit);
      expect(run.exit, run.output).toBe(held > 0 ? 4 : 0);
      expect(counters.ordersAccepted + held).toBeGreaterThanOrEqual(3000);
      expect(counters.ordersAccepted).toBeLessThanOrEqual(3000);
      expect(counters.duplicateOrdersAccepted).toBe(0);
      expect(batches.every((b) => b.importState !== 'importing')).toBe(true);
      recordReliability({
        fault: 'redis-server SIGKILLed mid-import of 3,000 orders, down 3 s, restarted (AOF), re-run at once',
        behaviour: `${firstExit === 0 ? 'importer rode out the outage' : `importer stopped with exit ${firstExit}`}; its batch closed; the re-run --wait finished the file; exit ${run.exit}`,
        orders: 3000,
        lost: Math.max(0, 3000 - counters.ordersAccepted - held),
        duplicates: counters.duplicateOrdersAccepted,
        held,
      });
    },
  );

  it('the watcher SIGKILLed mid-import: the next watcher finishes the file exactly once, no row left queued elsewhere', async () => {
    rig = await deliveryRig('watchkill');
    const drop = join(rig.dir, 'drop');
    await mkdir(join(drop, 'inbox'), { recursive: true });
    await writeFile(join(drop, 'inbox', 'night.csv'), ordersCsv('WK', 3000));
    await rig.startWorker({ concurrency: 50 });
    const watcher = startCli(['watch', drop, '--stable', '0.2', '--poll', '0.05'], { ...rig.env, LOG_LEVEL: 'warn' });
    await waitFor(
      async () => ((await batchesNow(rig!.config.redisUrl.reveal(), rig!.prefix))[0]?.enqueued ?? 0) >= 1000,
      '1000 orders queued',
      60_000,
    );
    watcher.child.kill('SIGKILL');
    await watcher.exited;
    // Its heartbeat lapses after 30 s; drop it now instead of waiting (the same state, sooner).
    for (const dir of await readdir(join(drop, 'processing')))
      await rm(join(drop, 'processing', dir, '.alive'), { force: true });
    const next = startCli(['watch', drop, '--once', '--stable', '0.2', '--poll', '0.05'], {
      ...rig.env,
      LOG_LEVEL: 'warn',
    });
    const exit = await next.exited;
    const counters = rig.simulator.counters();
    expect(exit, next.output()).toBe(0);
    expect(counters.ordersAccepted).toBe(3000);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    const done = (await readdir(join(drop, 'done'))).filter((n) => n.endsWith('.results.csv'));
    expect(done).toHaveLength(1);
    const results = await readFile(join(drop, 'done', done[0]!), 'utf8');
    expect(results).not.toMatch(/queued-elsewhere|pending/);
    recordReliability({
      fault: 'watcher SIGKILLed mid-import of 3,000 orders',
      behaviour:
        'the next watcher closed the dead batch, queued what it had reserved, imported the rest and followed every order to its end; exit 0',
      orders: 3000,
      lost: 3000 - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 300_000);
});
