import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { resolveSource } from '../../src/schedule/resolveSource.js';
import { runScheduledImport } from '../../src/schedule/runScheduledImport.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import { SCHEDULES_QUEUE, type ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { waitFor } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
let queue: Queue<ScheduledImportData> | undefined;
afterEach(async () => {
  await queue?.close();
  queue = undefined;
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

function schedules(r: DeliveryRig): ScheduleStore {
  queue = new Queue<ScheduledImportData>(SCHEDULES_QUEUE, { connection: r.services.redis, prefix: r.prefix });
  return new ScheduleStore(queue);
}

describe('scheduled imports (BullMQ job schedulers, real Redis, simulator, workers)', () => {
  it('a schedule fires, the workers import its source, and a second firing sends nothing twice', async () => {
    rig = await deliveryRig('schedule-fire');
    const file = await rig.writeFile(
      'nightly.csv',
      [HEADER, orderRow('N-1'), orderRow('N-2'), orderRow('N-3')].join('\n') + '\n',
    );
    await rig.startWorker({ concurrency: 2 }); // a `bulkorder worker` process: delivery and scheduled imports
    const store = schedules(rig);
    await store.set({ name: 'nightly', cron: '* * * * * *', source: file }); // every second

    // Each firing imports a copy of the source in its trail (BULKORDER_RESULTS_DIR/schedules/nightly/).
    const trail = join(rig.config.files.resultsDir, 'schedules', 'nightly');
    const batchesOf = async () =>
      (await rig!.services.batches.list(100)).filter(
        (b) => b.file.startsWith(trail) && b.file.endsWith('.nightly.csv'),
      );
    await waitFor(async () => (await batchesOf()).length >= 2, 'two firings of the schedule');
    await waitFor(async () => (await store.list())[0]?.lastRun !== undefined, 'a finished firing');
    const [listed] = await store.list();
    expect(listed!.lastRun).toMatchObject({
      state: 'completed',
      result: { schedule: 'nightly', files: [{ file, rejected: 0 }] },
    });
    await store.remove('nightly');
    const fired = await batchesOf();
    for (const batch of fired)
      await followBatch(rig.services.batches, batch.id, { pollMs: 50, timeoutMs: 20_000, out: quiet });

    const settled = await batchesOf();
    expect(settled.reduce((n, b) => n + b.enqueued, 0)).toBe(3); // each order queued by exactly one firing
    expect(settled.every((b) => b.valid === 3 && b.enqueued + b.skippedDelivered + b.skippedQueued === 3)).toBe(true);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 3, duplicateOrdersAccepted: 0 });
    expect(await store.list()).toEqual([]);
  });

  it('setting a schedule again replaces it; bad patterns, zones and names are usage errors', async () => {
    rig = await deliveryRig('schedule-set');
    const store = schedules(rig);
    await store.set({ name: 'nightly', cron: '0 2 * * *', tz: 'Europe/Amsterdam', source: '/srv/a.csv' });
    const replaced = await store.set({ name: 'nightly', cron: '30 3 * * *', tz: 'UTC', source: '/srv/b.csv' });
    expect(replaced).toMatchObject({ name: 'nightly', cron: '30 3 * * *', tz: 'UTC', source: '/srv/b.csv' });
    expect(new Date(replaced.next!).toISOString()).toMatch(/T03:30:00\.000Z$/);
    expect(await store.list()).toHaveLength(1);
    await expect(store.set({ name: 'x', cron: 'every night', source: '/srv/a.csv' })).rejects.toMatchObject({
      code: 'CRON_INVALID',
      exitCode: 2,
    });
    await expect(
      store.set({ name: 'x', cron: '0 2 * * *', tz: 'Mars/Olympus', source: '/srv/a.csv' }),
    ).rejects.toMatchObject({ code: 'TZ_INVALID' });
    await expect(store.set({ name: 'no spaces', cron: '0 2 * * *', source: '/srv/a.csv' })).rejects.toMatchObject({
      code: 'SCHEDULE_NAME_INVALID',
    });
  });

  it('the CLI sets, lists and removes a schedule', async () => {
    rig = await deliveryRig('schedule-cli');
    const run = async (args: string[]) => {
      const { code, output } = await runCli(['schedule', ...args], rig!.env);
      return { code, output };
    };
    const set = await run(['set', 'nightly', '--cron', '0 2 * * *', '--tz', 'Europe/Amsterdam', '--source', rig.dir]);
    expect(set.code).toBe(0);
    expect(set.output).toMatch(/schedule nightly set: cron "0 2 \* \* \*" \(Europe\/Amsterdam\)/);
    expect((await run(['list'])).output).toContain(`nightly: cron "0 2 * * *" (Europe/Amsterdam), source ${rig.dir}`);
    expect((await run(['set', 'x', '--cron', '0 2 * * *', '--tz', 'Nowhere/Land', '--source', rig.dir])).code).toBe(2);
    expect((await run(['remove', 'nightly'])).code).toBe(0);
    expect((await run(['remove', 'nightly'])).code).toBe(2);
    expect(
      (await run(['set', 'y', '--cron', '0 2 * * *', '--source', join(rig.dir, 'no-such-folder', 'x.csv')])).code,
    ).toBe(2);
    const json = await run([
      'set',
      'j',
      '--cron',
      '0 2 * * *',
      '--tz',
      'Europe/Amsterdam',
      '--source',
      rig.dir,
      '--json',
    ]);
    expect(json.code).toBe(0);
    expect(json.output).toContain('"name": "j"');
    expect((await run(['list'])).output).toMatch(
      /next run \d{4}-\d{2}-\d{2} \d\d:00:00 [+-]\d\d:\d\d \(\d{4}-\d{2}-\d{2} 02:00 Europe\/Amsterdam\)/,
    );
  }, 90_000); // several real CLI processes: 22 s alone on a 2-core machine

  it('a source is a file, every order file of a folder (never our own rejects or results), or a glob in the last segment', async () => {
    rig = await deliveryRig('schedule-source');
    const dir = join(rig.dir, 'exports');
    await mkdir(dir);
    for (const name of [
      'orders-1.csv',
      'orders-2.csv',
      'orders-1.rejects.csv',
      'orders-1.results.csv',
      'notes.md',
      'other.ndjson',
    ])
      await writeFile(join(dir, name), 'x');
    await mkdir(join(dir, 'sub.csv'));
    expect(await resolveSource(dir)).toEqual(['orders-1.csv', 'orders-2.csv', 'other.ndjson'].map((n) => join(dir, n)));
    expect(await resolveSource(join(dir, 'orders-*.csv'))).toEqual(
      ['orders-1.csv', 'orders-2.csv'].map((n) => join(dir, n)),
    );
    expect(await resolveSource(join(dir, 'orders-?.csv'))).toHaveLength(2);
    expect(await resolveSource(join(dir, 'tonight.csv'))).toEqual([]); // not arrived yet: nothing to import
    await expect(resolveSource(join(rig.dir, 'missing-folder'))).rejects.toMatchObject({ code: 'SOURCE_UNREADABLE' });
  });

  it('a firing whose export is missing or empty reports it as refused (needing attention), unless --allow-empty', async () => {
    rig = await deliveryRig('schedule-empty');
    const deps = rig.services.pipeline(rig.logger);
    const missing = await runScheduledImport(
      { schedule: 'nightly', source: join(rig.dir, 'tonight.csv'), ingest: {} },
      deps,
    );
    expect(missing.files).toEqual([
      {
        file: join(rig.dir, 'tonight.csv'),
        code: 'SOURCE_EMPTY',
        refused: expect.stringMatching(/^SOURCE_EMPTY: .*export is missing/),
      },
    ]);
    const allowed = await runScheduledImport(
      { schedule: 'nightly', source: join(rig.dir, 'tonight.csv'), ingest: { allowEmpty: true } },
      deps,
    );
    expect(allowed.files).toEqual([]);
    const empty = await rig.writeFile('tonight.csv', HEADER + '\n');
    const refused = await runScheduledImport({ schedule: 'nightly', source: empty, ingest: {} }, deps);
    expect(refused.files).toEqual([
      { file: empty, code: 'FILE_EMPTY', refused: expect.stringMatching(/^FILE_EMPTY: .*the file has no orders/) },
    ]);
  });
});
