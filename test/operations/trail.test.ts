/**
 * Issue 33: every entry point leaves the same trail. A CLI import, a drop-folder file and a scheduled
 * import each leave a results file and a rejects file at a path that stays valid, recorded on the
 * batch, so `status --json` names files that exist (the dashboard upload: test/observability/uploadBrowser.test.ts).
 * Real Redis, the simulator, BullMQ workers; the simulator's own counts say nothing was lost or sent twice.
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import type { Batch } from '../../src/batches/batchStore.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import { SCHEDULES_QUEUE, type ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { openDropFolder } from '../../src/watch/dropFolder.js';
import { waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';

let rig: DeliveryRig | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rig?.close();
  rig = undefined;
});

/** A row the API would take but our checks reject (a phone without country code). */
const badPhone = (ref: string) => orderRow(ref).replace(/,\+31[0-9]+,/, ',12345,');

const exists = (path: string | undefined) =>
  path === undefined
    ? Promise.resolve(false)
    : access(path).then(
        () => true,
        () => false,
      );

/** `status --json` through the real CLI: the batches as a script sees them. */
async function statusBatches(r: DeliveryRig): Promise<Batch[]> {
  const run = await runCli(['status', '--json', '--limit', '50'], r.env);
  expect(run.code).toBe(0);
  return (JSON.parse(run.stdout) as { batches: Batch[] }).batches;
}

describe('every entry point leaves a results and a rejects file at a path that stays valid', () => {
  it('a CLI import: --wait records both on the batch; without --wait the batch names no results file it never wrote', async () => {
    rig = await deliveryRig('trail-cli');
    const file = await rig.writeFile('night.csv', [HEADER, orderRow('C-1'), badPhone('C-2')].join('\n') + '\n');
    await rig.startWorker();
    const waited = await runCli(['import', file, '--wait', '--json'], rig.env);
    expect(waited.code).toBe(4); // a rejected row
    const { batchId } = JSON.parse(waited.stdout) as { batchId: string };
    const noWait = await runCli(['import', file, '--json'], rig.env);
    const second = (JSON.parse(noWait.stdout) as { batchId: string }).batchId;

    const batches = await statusBatches(rig);
    const first = batches.find((b) => b.id === batchId)!;
    expect(first).toMatchObject({ resultsFile: `${file}.results.csv`, rejectsFile: `${file}.rejects.csv` });
    expect([await exists(first.resultsFile), await exists(first.rejectsFile)]).toEqual([true, true]);
    const later = batches.find((b) => b.id === second)!;
    expect(later.resultsFile).toBeUndefined(); // nothing written: nothing named
    expect(await exists(later.rejectsFile)).toBe(true);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
  }, 90_000);

  it('the drop folder: beside the file in done/ with a .needs-attention note; the batch names them there; watch --once --json gives each file its summary', async () => {
    rig = await deliveryRig('trail-drop');
    const folder = await openDropFolder(join(rig.dir, 'drop'));
    await rig.writeFile(
      join('drop', 'inbox', 'night.csv'),
      [HEADER, orderRow('D-1'), orderRow('D-2', 5999), badPhone('D-3')].join('\n') + '\n',
    );
    await rig.startWorker();
    const watched = await runCli(
      ['watch', folder.root, '--once', '--json', '--stable', '0', '--poll', '0.05'],
      rig.env,
    );
    expect(watched.code).toBe(4);
    const report = JSON.parse(watched.stdout) as {
      done: {
        file: string;
        claimedAs: string;
        path: string;
        needsAttention: boolean;
        resultsFile: string;
        rejectsFile: string;
      }[];
      failed: unknown[];
      needsAttention: number;
    };
    expect(report).toMatchObject({ failed: [], needsAttention: 1 });
    const [summary] = report.done;
    expect(summary).toMatchObject({
      file: 'night.csv',
      needsAttention: true,
      path: join(folder.done, summary!.claimedAs),
      resultsFile: join(folder.done, `${summary!.claimedAs}.results.csv`),
      rejectsFile: join(folder.done, `${summary!.claimedAs}.rejects.csv`),
      delivery: { delivered: 1, dead: 1, held: 0 },
    });

    const [batch] = await statusBatches(rig);
    expect(batch).toMatchObject({
      file: summary!.path,
      resultsFile: summary!.resultsFile,
      rejectsFile: summary!.rejectsFile,
    });
    for (const path of [batch!.file, batch!.resultsFile, batch!.rejectsFile]) expect(await exists(path)).toBe(true);
    const results = await readFile(batch!.resultsFile!, 'utf8');
    expect(results).toMatch(/D-1,2,delivered/);
    expect(results).toMatch(/D-2,3,dead-lettered,,422,PRODUCT_UNKNOWN/);
    expect(results).toMatch(/D-3,4,rejected/);

    // Filed so that it is seen: a note beside it says what needs a person and how to act on it.
    const note = await readFile(join(folder.done, `${summary!.claimedAs}.needs-attention`), 'utf8');
    expect(note).toContain(`1 rejected: the rows and reasons are in ${summary!.claimedAs}.rejects.csv`);
    expect(note).toContain(`1 dead-lettered (the API refused them): bulkorder dead-letters list --batch ${batch!.id}`);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
  }, 90_000);

  it('a scheduled import: input, rejects and results under the results folder, the results file status names, and schedule list shows rejected rows and reused refs', async () => {
    rig = await deliveryRig('trail-schedule');
    await rig.startWorker(); // delivers, fires schedules and writes due results files
    // R-1 was delivered before; tonight's file names it with another product: ORDER_REF_REUSED.
    const before = await rig.importFile(await rig.writeFile('before.csv', [HEADER, orderRow('R-1')].join('\n') + '\n'));
    expect((await followBatch(rig.services.batches, before.batchId, { timeoutMs: 30_000 })).settled).toBe(true);
    const source = await rig.writeFile(
      'nightly.csv',
      [HEADER, orderRow('S-1'), badPhone('S-2'), orderRow('R-1', 5002)].join('\n') + '\n',
    );
    const queue = new Queue<ScheduledImportData>(SCHEDULES_QUEUE, {
      connection: rig.services.redis,
      prefix: rig.prefix,
    });
    cleanups.push(() => queue.close());
    const store = new ScheduleStore(queue);
    await store.set({ name: 'nightly', cron: '*/2 * * * * *', source });
    cleanups.push(() => store.remove('nightly'));
    await waitFor(async () => (await store.list())[0]?.lastRun !== undefined, 'a finished firing');
    const [fired] = (await store.list())[0]!.lastRun!.result!.files;
    expect(fired).toMatchObject({ file: source, rejected: 1, conflicts: 1 });
    const batchId = (fired as { batchId: string }).batchId;

    // The results file is written by a worker once the batch settles, in the schedule's trail.
    const trail = join(rig.config.files.resultsDir, 'schedules', 'nightly');
    await waitFor(
      async () => (await rig!.services.batches.get(batchId))?.resultsFile !== undefined,
      'the results file of the scheduled batch',
    );
    const batch = (await statusBatches(rig)).find((b) => b.id === batchId)!;
    expect(batch.file.startsWith(trail) && batch.file.endsWith('.nightly.csv')).toBe(true);
    expect(batch).toMatchObject({ resultsFile: `${batch.file}.results.csv`, rejectsFile: `${batch.file}.rejects.csv` });
    for (const path of [batch.file, batch.resultsFile, batch.rejectsFile]) expect(await exists(path)).toBe(true);
    const results = await readFile(batch.resultsFile!, 'utf8');
    expect(results).toMatch(/S-1,2,delivered/);
    expect(results).toMatch(/S-2,3,rejected/);
    expect(results).toMatch(/R-1,4,rejected,[^,]*,,ORDER_REF_REUSED/);

    const listed = await runCli(['schedule', 'list'], rig.env);
    expect(listed.output).toMatch(/1 order rejected, 1 order not sent: ORDER_REF_REUSED/);
    expect(listed.output).toMatch(/nightly\.csv: batch b-\S+, rejects \S+\.nightly\.csv\.rejects\.csv, results \S+/);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });
  }, 90_000);
});
