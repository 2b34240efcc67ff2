import { recordReliability } from '../helpers/reliabilityLog.js';
import { link, mkdir, readdir, readFile, rename, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { apiTarget } from '../../src/config.js';
import { newClaimName, openDropFolder } from '../../src/watch/dropFolder.js';
import { watchFolder, type WatchOptions } from '../../src/watch/watchFolder.js';
import { deliveryRig, HEADER, orderRow, withWorkerOnceRead, type DeliveryRig } from '../helpers/deliveryRig.js';
import type { Batch } from '../../src/batches/batchStore.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function watch(r: DeliveryRig, options: Partial<WatchOptions> = {}) {
  return watchFolder(
    { dir: join(r.dir, 'drop'), stableMs: 200, pollMs: 50, once: true, ...options },
    { services: r.services, target: apiTarget(r.config), logger: r.logger },
  );
}

/** A watcher's folder in processing/ whose heartbeat was touched `agoMs` ago (undefined: none, the watcher stopped). */
async function watcherDir(processing: string, id: string, agoMs: number | undefined): Promise<string> {
  const dir = join(processing, `watcher-${id}`);
  await mkdir(dir);
  if (agoMs !== undefined) {
    await writeFile(join(dir, '.alive'), '');
    const then = new Date(Date.now() - agoMs);
    await utimes(join(dir, '.alive'), then, then);
  }
  return dir;
}

function csv(prefix: string, n: number, product = 5001): string {
  return [HEADER, ...Array.from({ length: n }, (_, i) => orderRow(`${prefix}-${i + 1}`, product))].join('\n') + '\n';
}

/** The watcher's one file read (withWorkerOnceRead: its worker starts then, not beside the read). */
const oneRead = (batches: Batch[]) => batches.length >= 1 && batches.every((b) => b.importState !== 'importing');

describe('drop folder (real Redis, simulator, BullMQ workers)', () => {
  it('two watchers on one folder take every file exactly once; a half-written upload is not taken until renamed', async () => {
    rig = await deliveryRig('watch-two');
    const folder = await openDropFolder(join(rig.dir, 'drop'));
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f'])
      await writeFile(join(folder.inbox, `${name}.csv`), csv(name.toUpperCase(), 3));
    await writeFile(join(folder.inbox, 'late.csv.part'), csv('LATE', 2).slice(0, 200)); // still uploading

    // The worker starts once the six files are read (withWorkerOnceRead): the claims are what this tests.
    const all = Promise.all([watch(rig), watch(rig)]);
    const read = (batches: Batch[]) => batches.length >= 6 && batches.every((b) => b.importState !== 'importing');
    const [one, two] = await withWorkerOnceRead(rig, read, all, { concurrency: 4 });
    await rig.startWorker({ concurrency: 4 }); // for the late upload
    const taken = [...one.done, ...two.done];
    expect(taken).toHaveLength(6);
    expect(new Set(taken.map((claim) => claim.replace(/^.*?\./, ''))).size).toBe(6);
    expect((await rig.services.batches.list(100)).length).toBe(6); // each file imported once
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 18, duplicateOrdersAccepted: 0 });
    expect(await readdir(folder.inbox)).toEqual(['late.csv.part']);
    expect(await readdir(folder.processing)).toEqual([]);

    const done = await readdir(folder.done);
    expect(done.filter((n) => n.endsWith('.summary.json'))).toHaveLength(6);
    expect(done.filter((n) => n.endsWith('.results.csv'))).toHaveLength(6);
    const aClaim = taken.find((claim) => claim.endsWith('.a.csv'))!;
    const summary = JSON.parse(await readFile(join(folder.done, aClaim + '.summary.json'), 'utf8'));
    expect(summary).toMatchObject({
      file: 'a.csv',
      outcome: 'done',
      needsAttention: false,
      delivery: { delivered: 3, dead: 0, held: 0 },
      results: { delivered: 3 },
    });

    // The upload finishes: renamed to its real name, it is taken.
    await writeFile(join(folder.inbox, 'late.csv.part'), csv('LATE', 2));
    await rename(join(folder.inbox, 'late.csv.part'), join(folder.inbox, 'late.csv'));
    const late = await watch(rig);
    expect(late.done).toHaveLength(1);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 20, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'two watchers on one drop folder; a half-written upload (*.part)',
      behaviour: 'each file claimed once by an atomic rename; the upload taken only once renamed',
      orders: 20,
      lost: 20 - rig.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 90_000);

  it('refuses symlinks, hard links, non-regular entries, oversized and unreadable files into failed/ with a summary; rejects go to done/', async () => {
    rig = await deliveryRig('watch-refuse');
    const folder = await openDropFolder(join(rig.dir, 'drop'));
    await writeFile(join(rig.dir, 'outside.csv'), csv('OUT', 1));
    await symlink(join(rig.dir, 'outside.csv'), join(folder.inbox, 'link.csv'));
    await link(join(rig.dir, 'outside.csv'), join(folder.inbox, 'hard.csv'));
    await mkdir(join(folder.inbox, 'a-folder'));
    await writeFile(join(folder.inbox, 'big.csv'), csv('BIG', 40));
    await writeFile(join(folder.inbox, 'columns.csv'), 'name,city\nAnna,Amsterdam\n');
    await writeFile(join(folder.inbox, 'empty.csv'), HEADER + '\n'); // a night whose export came out empty
    await writeFile(
      join(folder.inbox, 'mixed.csv'),
      csv('MIX', 1) + 'MIX-BAD,1001,Anna,de Vries,Keizersgracht,12a,1015 CX,Amsterdam,NL,nl,x,+31612345678,5001,1\n',
    );
    await rig.startWorker({ concurrency: 2 });

    const report = await watch(rig, { maxBytes: 2000 });
    expect(report.failed).toHaveLength(6);
    expect(report.done).toHaveLength(1);
    const codes: Record<string, string> = {};
    for (const name of (await readdir(folder.failed)).filter((n) => n.endsWith('.summary.json'))) {
      const s = JSON.parse(await readFile(join(folder.failed, name), 'utf8')) as { file: string; code: string };
      codes[s.file] = s.code;
    }
    expect(codes).toEqual({
      'link.csv': 'WATCH_SYMLINK',
      'hard.csv': 'WATCH_HARD_LINK',
      'a-folder': 'WATCH_NOT_A_FILE',
      'big.csv': 'WATCH_TOO_LARGE',
      'columns.csv': 'COLUMNS_MISSING',
      'empty.csv': 'FILE_EMPTY',
    });
    const done = await readdir(folder.done);
    expect(done.some((n) => n.endsWith('.mixed.csv.rejects.csv'))).toBe(true);
    expect(report.needsAttention).toBe(7);
    expect(rig.simulator.counters().ordersAccepted).toBe(1); // only the valid row of mixed.csv; nothing from outside
    recordReliability({
      fault: 'a symlink, a hard link, a folder and an oversized file in the drop folder',
      behaviour: 'each refused into failed/ with a summary naming why; nothing outside the folder read',
      orders: 1,
      lost: 1 - rig.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  });

  it("resumes a file left in processing/ by a watcher that died, without importing it again; leaves a live watcher's file alone", async () => {
    rig = await deliveryRig('watch-resume');
    const folder = await openDropFolder(join(rig.dir, 'drop'));
    await rig.startWorker({ concurrency: 2 });

    // A watcher claimed this file and imported it, then died before the batch settled (its heartbeat is old).
    const deadDir = await watcherDir(folder.processing, 'dead', 60_000);
    const imported = newClaimName('imported.csv');
    await writeFile(join(deadDir, imported), csv('IMP', 4));
    const first = await rig.importFile(join(deadDir, imported));
    await rig.services.redis.hset(rig.services.keys.watchClaim(imported), 'batches', JSON.stringify([first.batchId]));
    // Another (an older version, claiming straight into processing/) died right after its claim, before importing.
    const claimedOnly = newClaimName('claimed.csv');
    await writeFile(join(folder.processing, claimedOnly), csv('CLM', 2));
    // Another died during its import, before it could record the batch; it had stopped its heartbeat.
    const stoppedDir = await watcherDir(folder.processing, 'stopped', undefined);
    const midImport = newClaimName('mid.csv');
    await writeFile(join(stoppedDir, midImport), csv('MID', 3));
    const orphan = await rig.importFile(join(stoppedDir, midImport));
    await rig.services.redis.hset(rig.services.keys.batch(orphan.batchId), 'importState', 'importing');
    // A third belongs to a watcher that is alive (it keeps touching its heartbeat).
    const liveDir = await watcherDir(folder.processing, 'live', 0);
    const busy = newClaimName('busy.csv');
    await writeFile(join(liveDir, busy), csv('BUSY', 1));
    const beating = setInterval(
      () => void utimes(join(liveDir, '.alive'), new Date(), new Date()).catch(() => undefined),
      200,
    );

    const waits: string[] = [];
    const report = await watch(rig, { lockMs: 1500, onWaiting: (message) => waits.push(message) }).finally(() =>
      clearInterval(beating),
    );
    expect(report.done.sort()).toEqual([claimedOnly, imported, midImport].sort());
    expect(await readdir(folder.processing)).toEqual(['watcher-live']); // the dead watchers' folders removed, this one's too
    expect(await readdir(liveDir)).toEqual(['.alive', busy]);
    // --once says what it waits for, and reports the file that stayed another watcher's (exit 4 in the CLI).
    expect(waits).toEqual([
      expect.stringContaining(`waiting for processing/watcher-live/${busy}: another watcher holds it`),
    ]);
    expect(report.unclaimed).toEqual([busy]);
    const batches = await rig.services.batches.list(100);
    expect(batches.filter((b) => b.file.endsWith(imported))).toHaveLength(1); // followed, not imported again
    const mid = batches.filter((b) => b.file.endsWith(midImport));
    expect(mid.map((b) => b.importState).sort()).toEqual(['failed', 'imported']); // the orphan closed, the file imported again
    expect(mid.reduce((n, b) => n + b.enqueued, 0)).toBe(3);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 9, duplicateOrdersAccepted: 0 });
    const midSummary = JSON.parse(await readFile(join(folder.done, midImport + '.summary.json'), 'utf8'));
    expect(midSummary.batches).toHaveLength(2);
    expect(midSummary.delivery).toEqual({ delivered: 3, dead: 0, held: 0, possibleDuplicates: 0 });
    const summary = JSON.parse(await readFile(join(folder.done, imported + '.summary.json'), 'utf8'));
    expect(summary).toMatchObject({ batches: [first.batchId], delivery: { delivered: 4 } });
  }, 90_000);

  it('--once right after a watcher crash waits for its lock to lapse, says so, and resumes the file', async () => {
    rig = await deliveryRig('watch-crash-once');
    const folder = await openDropFolder(join(rig.dir, 'drop'));
    const crashed = newClaimName('crashed.csv');
    const dir = await watcherDir(folder.processing, 'crashed', 3000 - 700); // lapses in 0.7 s, never touched again
    await writeFile(join(dir, crashed), csv('CRASH', 2));
    const waits: string[] = [];
    const report = await withWorkerOnceRead(
      rig,
      oneRead,
      watch(rig, { lockMs: 3000, onWaiting: (message) => waits.push(message) }),
      { concurrency: 2 },
    );
    expect(waits).toEqual([expect.stringContaining(`processing/watcher-crashed/${crashed}`)]);
    expect(report).toMatchObject({ done: [crashed], unclaimed: [] });
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });
  }, 90_000);

  it('takes a file whose name is not UTF-8 (a Latin-1 name from an old upload) instead of ignoring it', async () => {
    rig = await deliveryRig('watch-latin1');
    const folder = await openDropFolder(join(rig.dir, 'drop'));
    const latin1 = Buffer.concat([Buffer.from(`${folder.inbox}/M`), Buffer.from([0xfc]), Buffer.from('ller.csv')]);
    await writeFile(latin1, csv('LATIN', 1));
    const report = await withWorkerOnceRead(rig, oneRead, watch(rig), { concurrency: 2 });
    expect(report.done).toEqual([expect.stringMatching(/\.Müller\.csv$/)]);
    expect(await readdir(folder.inbox)).toEqual([]);
    expect((await readdir(folder.done)).filter((n) => n.endsWith('.Müller.csv.summary.json'))).toHaveLength(1);
    expect(rig.simulator.counters().ordersAccepted).toBe(1);
  });
});
