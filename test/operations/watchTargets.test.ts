import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { apiTarget } from '../../src/config.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import { SCHEDULES_QUEUE, type ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { openDropFolder } from '../../src/watch/dropFolder.js';
import { watchFolder } from '../../src/watch/watchFolder.js';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { runCli } from '../helpers/runCli.js';

let rigs: DeliveryRig[] = [];
afterEach(async () => {
  await killAllCli();
  await Promise.all(rigs.map((r) => r.close()));
  rigs = [];
});

const FLAGS = ['--once', '--stable', '0.2', '--poll', '0.05'];

describe('a drop folder belongs to one target (issue 26)', () => {
  it('two watchers of two targets (two APIs, one Redis, one folder): every file reaches one API; the other watcher exits 2 naming the owner', async () => {
    const one = await deliveryRig('wt-one');
    const two = await deliveryRig('wt-two');
    rigs = [one, two];
    const drop = join(one.dir, 'drop');
    await mkdir(join(drop, 'inbox'), { recursive: true });
    for (const name of ['a', 'b', 'c'])
      await writeFile(join(drop, 'inbox', `${name}.csv`), ordersCsv(name.toUpperCase(), 5));
    await one.startWorker({ concurrency: 4 });
    await two.startWorker({ concurrency: 4 });

    // Started together: which one records its target first is a race; exactly one may serve the folder.
    const first = startCli(['watch', drop, ...FLAGS], one.env);
    const second = startCli(['watch', drop, ...FLAGS], two.env);
    const exits = [await first.exited, await second.exited];
    expect([...exits].sort(), first.output() + second.output()).toEqual([0, 2]);
    const [owner, refused] = exits[0] === 0 ? [one, second] : [two, first];
    const other = owner === one ? two : one;
    expect(refused.output()).toContain(
      `serves another target: acceptance, API ${owner.simulator.url}/business-api, client id sim-business`,
    );
    expect(owner.simulator.counters()).toMatchObject({ ordersAccepted: 15, duplicateOrdersAccepted: 0 });
    expect(other.simulator.counters().ordersAccepted).toBe(0);
    expect((await readdir(join(drop, 'done'))).filter((n) => n.endsWith('.summary.json'))).toHaveLength(3);

    // Later, with nothing running, the other target's watcher is still refused before it takes anything.
    await writeFile(join(drop, 'inbox', 'd.csv'), ordersCsv('D', 2));
    const again = startCli(['watch', drop, ...FLAGS], other.env);
    expect(await again.exited).toBe(2);
    expect(again.output()).toMatch(/remove .*\.bulkorder-target\.json/);
    expect(await readdir(join(drop, 'inbox'))).toEqual(['d.csv']);
    expect(other.simulator.counters().ordersAccepted).toBe(0);
    recordReliability({
      fault: 'two watchers of two targets (two APIs) on one drop folder, one Redis',
      behaviour: 'the folder records the first target; the other watcher exits 2 naming it; every file reached one API',
      orders: 15,
      lost: 15 - owner.simulator.counters().ordersAccepted,
      duplicates: owner.simulator.counters().duplicateOrdersAccepted + other.simulator.counters().ordersAccepted,
      held: 0,
    });
  }, 120_000);

  it("a watcher in another Redis namespace leaves a live watcher's file alone (the claim is in the file system)", async () => {
    const one = await deliveryRig('wt-ns-one');
    // The same API and client (one target), another key prefix: what two Redis instances would look like.
    const two = await deliveryRig('wt-ns-two', {}, { BULKORDER_BASE_URL: one.simulator.url });
    rigs = [one, two];
    const folder = await openDropFolder(join(one.dir, 'drop'));
    await writeFile(join(folder.inbox, 'night.csv'), ordersCsv('NS', 6));
    const target = apiTarget(one.config);
    const stopOne = new AbortController();
    // No worker in its namespace yet: the first watcher imports the file and keeps following it.
    const watching = watchFolder(
      { dir: folder.root, stableMs: 100, pollMs: 50, signal: stopOne.signal },
      { services: one.services, target, logger: one.logger },
    );
    await waitFor(
      async () => (await one.services.batches.list(10)).length === 1,
      'the file imported by the first watcher',
    );

    await two.startWorker({ concurrency: 4 });
    const report = await watchFolder(
      { dir: folder.root, stableMs: 100, pollMs: 50, once: true, lockMs: 1000 },
      { services: two.services, target, logger: two.logger },
    );
    expect(report).toMatchObject({ done: [], failed: [], unclaimed: [expect.stringMatching(/\.night\.csv$/)] });
    expect(await two.services.batches.list(10)).toEqual([]);

    await one.startWorker({ concurrency: 4 });
    await waitFor(
      async () => (await readdir(folder.done)).some((n) => n.endsWith('.night.csv')),
      'the first watcher to finish the file',
      60_000,
    );
    stopOne.abort();
    expect((await watching).done).toHaveLength(1);
    expect(one.simulator.counters()).toMatchObject({ ordersAccepted: 6, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'a watcher in another Redis namespace (or Redis) on a folder whose file a live watcher follows',
      behaviour: "left alone: the claim is a rename into the live watcher's folder with a heartbeat, not a Redis lock",
      orders: 6,
      lost: 6 - one.simulator.counters().ordersAccepted,
      duplicates: one.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 120_000);

  it("a schedule of target B whose source is target A's drop folder is refused at `schedule set` and at every firing", async () => {
    const a = await deliveryRig('wt-sched-a');
    const b = await deliveryRig('wt-sched-b');
    rigs = [a, b];
    const drop = join(a.dir, 'drop');
    // A's watcher records its target (an empty inbox: it claims the folder and ends).
    const watcher = startCli(['watch', drop, ...FLAGS], a.env);
    expect(await watcher.exited).toBe(0);

    const set = (rig: DeliveryRig, source: string) =>
      runCli(['schedule', 'set', 'nightly', '--cron', '0 2 * * *', '--source', source], rig.env);
    for (const source of [join(drop, 'inbox'), join(drop, 'inbox', '*.csv'), join(drop, 'inbox', 'x.csv'), drop]) {
      const refused = await set(b, source);
      expect(refused.code, source).toBe(2);
      expect(refused.output).toContain(
        `is inside the drop folder ${drop}, which serves another target: acceptance, API ${a.simulator.url}/business-api, client id sim-business`,
      );
      expect(refused.output).toContain(`this schedule is for acceptance, API ${b.simulator.url}/business-api`);
    }
    // Its own target's schedule on the same inbox is fine (one API either way).
    expect((await set(a, join(drop, 'inbox'))).code).toBe(0);
    expect((await runCli(['schedule', 'remove', 'nightly'], a.env)).code).toBe(0);

    // A schedule B set before A's watcher claimed the folder is refused when it fires.
    const share = join(b.dir, 'share');
    await mkdir(join(share, 'inbox'), { recursive: true });
    const queue = new Queue<ScheduledImportData>(SCHEDULES_QUEUE, { connection: b.services.redis, prefix: b.prefix });
    try {
      const store = new ScheduleStore(queue);
      await store.set({ name: 'early', cron: '* * * * * *', source: join(share, 'inbox') });
      const claim = startCli(['watch', share, ...FLAGS], a.env);
      expect(await claim.exited).toBe(0);
      await writeFile(join(share, 'inbox', 'night.csv'), ordersCsv('SH', 5));
      await b.startWorker({ concurrency: 2 }); // delivery and scheduled imports, as `bulkorder worker`
      await waitFor(async () => (await store.list())[0]?.lastRun !== undefined, "a firing of B's schedule", 60_000);
      const [listed] = await store.list();
      expect(listed!.lastRun).toMatchObject({
        state: 'completed',
        result: { files: [{ file: join(share, 'inbox'), code: 'SOURCE_OTHER_TARGET' }] },
      });
      await store.remove('early');
    } finally {
      await queue.close();
    }
    expect(await b.services.batches.list(10)).toEqual([]);
    // A's watcher takes the file: it reaches A's API alone.
    await a.startWorker({ concurrency: 2 });
    const owner = startCli(['watch', share, ...FLAGS], a.env);
    expect(await owner.exited).toBe(0);
    expect(a.simulator.counters()).toMatchObject({ ordersAccepted: 5, duplicateOrdersAccepted: 0 });
    expect(b.simulator.counters().ordersAccepted).toBe(0);
    recordReliability({
      fault: "a schedule of target B whose source is target A's drop folder (inbox, a glob, a file, the root)",
      behaviour:
        'refused at `schedule set` (exit 2 SOURCE_OTHER_TARGET naming the owner) and at every firing (a folder claimed later); the file reached A alone',
      orders: 5,
      lost: 5 - a.simulator.counters().ordersAccepted,
      duplicates: a.simulator.counters().duplicateOrdersAccepted + b.simulator.counters().ordersAccepted,
      held: 0,
    });
  }, 120_000);
});
