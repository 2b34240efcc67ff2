/**
 * Every file the product writes on a real small file system (issue 26, item 9; issue 37, item 4):
 * a 64 KiB tmpfs filled up, and one remounted read-only, under each kind of file (journal,
 * results, rejects, dead-letter export, spill). Each: exit 5 naming the path, no half file under
 * the final name (nor a partial left), and a rerun after freeing space that completes with nothing
 * sent twice (counted at the simulator). Needs root to mount; skipped where mounting is not allowed.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, HEADER, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { canMount, tmpfs, unmountAll } from '../helpers/tmpfs.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await unmountAll();
  await rig?.close();
  rig = undefined;
});

const mountable = await canMount();

/** Fills `dir` with a file `filler` so that `leave` bytes stay free. */
async function fill(dir: string, leave: number): Promise<void> {
  const free = await statfs(dir);
  await writeFile(join(dir, 'filler'), Buffer.alloc(Math.max(0, Number(free.bavail) * Number(free.bsize) - leave)));
}

/** Jobs of the rig's queue in any state: 0 proves an import queued nothing. */
async function queuedJobs(r: DeliveryRig): Promise<number> {
  const counts = await r.services.queue.getJobCounts();
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

const badPhone = (ref: string) => orderRow(ref).replace(/,\+31[0-9]+,/, ',12345,');

describe.skipIf(!mountable)('every file on a full or read-only disk: exit 5 naming the path', () => {
  it('a disk full while writing results: exit 5 naming the path, no file cut mid-row under any name; the rerun writes them and sends nothing again', async () => {
    rig = await deliveryRig('disk-full');
    const dir = await tmpfs('64k');
    const file = join(dir, 'night.csv');
    await writeFile(file, ordersCsv('FULL', 150));
    // Room for the journal (and its rewrite under a temp name), not for the results (wider than the input).
    await fill(dir, 3 * 4096);
    await rig.startWorker({ concurrency: 4 });

    const first = startCli(['import', file, '--wait'], rig.env);
    expect(await first.exited, first.output()).toBe(5);
    expect(first.output()).toContain(`could not write ${file}.results.csv (ENOSPC: no space left on the device)`);
    // Neither the results nor a partial file left; the import journal (written before the disk filled) stays.
    expect(await readdir(dir)).toEqual(['filler', 'night.csv', 'night.csv.journal']);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 150, duplicateOrdersAccepted: 0 });

    await rm(join(dir, 'filler'));
    const again = startCli(['import', file, '--wait'], rig.env);
    expect(await again.exited, again.output()).toBe(0);
    const results = await readFile(`${file}.results.csv`, 'utf8');
    expect(results.match(/already-delivered/g)).toHaveLength(150);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 150, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'a full disk (64 KiB tmpfs) while writing the results file beside the input',
      behaviour:
        'exit 5 naming the path (ENOSPC); no results file cut mid-row, no partial left; the rerun wrote them and sent nothing again',
      orders: 150,
      lost: 150 - rig.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 180_000);

  it('a disk full before the import journal: exit 5 naming the journal, nothing queued, no file left; the rerun delivers each order once', async () => {
    rig = await deliveryRig('disk-journal');
    const dir = await tmpfs('64k');
    const file = join(dir, 'night.csv');
    await writeFile(file, ordersCsv('JRN', 40));
    await fill(dir, 0);
    await rig.startWorker({ concurrency: 4 });

    const first = startCli(['import', file], rig.env);
    expect(await first.exited, first.output()).toBe(5);
    expect(first.output()).toContain(`could not write ${file}.journal (ENOSPC: no space left on the device)`);
    expect(first.output()).toContain('Nothing was queued');
    expect(first.output()).not.toContain('internal error');
    expect(await readdir(dir)).toEqual(['filler', 'night.csv']);
    expect(await queuedJobs(rig)).toBe(0);
    expect(rig.simulator.counters().ordersAccepted).toBe(0);

    await rm(join(dir, 'filler'));
    const again = startCli(['import', file, '--wait'], rig.env);
    expect(await again.exited, again.output()).toBe(0);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 40, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'a full disk (64 KiB tmpfs) under the import journal `<input>.journal`, before anything was queued',
      behaviour:
        'exit 5 JOURNAL_WRITE_FAILED naming the journal (was: a note, or exit 1 "internal error: ENOSPC"); nothing queued, no file left; the rerun delivered each order once',
      orders: 40,
      lost: 40 - rig.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 180_000);

  it('a disk that fills between two journal writes: exit 5 saying the orders are queued; they are delivered once, and the rerun sends nothing again', async () => {
    rig = await deliveryRig('disk-journal2');
    const dir = await tmpfs('64k');
    const file = join(dir, 'night.csv');
    await writeFile(file, ordersCsv('JR2', 40));
    // One block: the journal's first write fits, its rewrite (a temp file beside it) does not.
    await fill(dir, 4096);
    await rig.startWorker({ concurrency: 4 });

    const first = startCli(['import', file], rig.env);
    expect(await first.exited, first.output()).toBe(5);
    expect(first.output()).toContain(`could not write ${file}.journal (ENOSPC: no space left on the device)`);
    expect(first.output()).toContain('are queued and a running worker delivers them');
    // The first journal whole (no half one, no partial): it names the batch the rerun relies on.
    expect(await readdir(dir)).toEqual(['filler', 'night.csv', 'night.csv.journal']);
    expect(JSON.parse(await readFile(`${file}.journal`, 'utf8'))).toMatchObject({ journal: 1 });
    const delivered = rig;
    await waitFor(() => delivered.simulator.counters().ordersAccepted >= 40, 'the queued orders delivered', 120_000);

    await rm(join(dir, 'filler'));
    const again = startCli(['import', file, '--wait'], rig.env);
    expect(await again.exited, again.output()).toBe(0);
    expect(again.output()).toContain('40 already delivered');
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 40, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'a disk that fills between the import journal`s first write and its rewrite (64 KiB tmpfs)',
      behaviour:
        'exit 5 JOURNAL_WRITE_FAILED naming the journal and saying the orders are queued; the first journal stays whole; the worker delivered them once, the rerun skipped all',
      orders: 40,
      lost: 40 - rig.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 240_000);

  it('a read-only input folder: import exits 5 naming the journal, validate exits 5 naming the rejects file, nothing written or sent; made writable, the import delivers once', async () => {
    rig = await deliveryRig('disk-ro');
    const dir = await tmpfs('256k');
    const good = join(dir, 'good.csv');
    const mixed = join(dir, 'mixed.csv');
    await writeFile(good, ordersCsv('RO', 3));
    await writeFile(mixed, [HEADER, orderRow('ROM-1'), badPhone('ROM-2')].join('\n') + '\n');
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    await rig.startWorker({ concurrency: 2 });

    const imported = startCli(['import', good], rig.env);
    expect(await imported.exited, imported.output()).toBe(5);
    expect(imported.output()).toContain(`cannot write ${good}.journal (EROFS: a read-only file system)`);
    expect(imported.output()).not.toMatch(/\n\s+at /); // no stack trace
    const validated = startCli(['validate', mixed], rig.env);
    expect(await validated.exited, validated.output()).toBe(5);
    expect(validated.output()).toContain(`cannot write ${mixed}.rejects.csv (EROFS: a read-only file system)`);
    expect(validated.output()).not.toMatch(/\n\s+at /);
    expect(await readdir(dir)).toEqual(['good.csv', 'mixed.csv']);
    expect(await queuedJobs(rig)).toBe(0);

    execFileSync('mount', ['-o', 'remount,rw', dir]);
    const again = startCli(['import', good, '--wait'], rig.env);
    expect(await again.exited, again.output()).toBe(0);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 3, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'a read-only input folder (tmpfs remounted ro)',
      behaviour:
        'import exit 5 naming the journal (EROFS), validate exit 5 naming the rejects file, no stack trace, nothing queued; remounted rw, the import delivered each order once',
      orders: 3,
      lost: 3 - rig.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 180_000);

  it('a disk full while writing rejects: exit 5 naming the rejects file, no half file; with space the same validate writes it whole', async () => {
    rig = await deliveryRig('disk-rejects');
    const dir = await tmpfs('64k');
    const file = join(dir, 'bad.csv');
    const rows = [HEADER];
    for (let i = 1; i <= 150; i++) rows.push(badPhone(`REJ-${i}`));
    await writeFile(file, rows.join('\n') + '\n');
    await fill(dir, 4096);

    const first = startCli(['validate', file], rig.env);
    expect(await first.exited, first.output()).toBe(5);
    expect(first.output()).toContain(`could not write ${file}.rejects.csv (ENOSPC: no space left on the device)`);
    expect(await readdir(dir)).toEqual(['bad.csv', 'filler']);

    await rm(join(dir, 'filler'));
    const again = startCli(['validate', file], rig.env);
    expect(await again.exited, again.output()).toBe(4);
    const rejects = await readFile(`${file}.rejects.csv`, 'utf8');
    expect(rejects.trimEnd().split('\r\n')).toHaveLength(151); // the header and every row, whole
    recordReliability({
      fault: 'a full disk (64 KiB tmpfs) while writing the rejects file',
      behaviour: 'exit 5 naming the rejects file (ENOSPC), no half or partial file; with space, written whole',
      orders: 150,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 180_000);

  it('a disk full under a dead-letter export: exit 5 naming the path, no half file, no dead letter changed; with space the export is whole', async () => {
    rig = await deliveryRig('disk-export');
    const input = join(rig.dir, 'night.csv');
    await writeFile(
      input,
      [HEADER, orderRow('DLX-1', 5999), orderRow('DLX-2', 5999), orderRow('DLX-3')].join('\n') + '\n',
    );
    await rig.startWorker({ concurrency: 2 });
    const imported = startCli(['import', input, '--wait'], rig.env);
    expect(await imported.exited, imported.output()).toBe(4); // two dead letters
    const dir = await tmpfs('64k');
    await fill(dir, 0);
    const out = join(dir, 'fix.csv');

    const first = startCli(['dead-letters', 'export', '--out', out], rig.env);
    expect(await first.exited, first.output()).toBe(5);
    expect(first.output()).toContain(`could not write ${out} (ENOSPC: no space left on the device)`);
    expect(await readdir(dir)).toEqual(['filler']);

    await rm(join(dir, 'filler'));
    const again = startCli(['dead-letters', 'export', '--out', out], rig.env);
    expect(await again.exited, again.output()).toBe(0);
    const text = await readFile(out, 'utf8');
    expect(text.match(/DLX-[12],/g)).toHaveLength(2);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'a full disk (64 KiB tmpfs) under `dead-letters export --out`',
      behaviour:
        'exit 5 EXPORT_WRITE_FAILED naming the path, no half or partial file, dead letters unchanged; with space the export was whole',
      orders: 3,
      lost: 0,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 180_000);

  it('a full temp folder (TMPDIR) under a large file`s spill: exit 5 naming the spill folder, nothing queued or left; with space it is delivered once', async () => {
    rig = await deliveryRig('disk-spill');
    const count = 3500; // NDJSON over 1 MiB: grouped through spill files
    const lines: string[] = [];
    for (let i = 1; i <= count; i++)
      lines.push(
        JSON.stringify({
          orderRef: `SPL-${i}`,
          businessCustomerId: 1001,
          firstName: 'Anna',
          lastName: 'de Vries',
          street: 'Keizersgracht',
          streetNumber: '12',
          postalCode: '1015 CX',
          city: 'Amsterdam',
          countryCode: 'NL',
          languageCode: 'nl',
          email: `anna.spl-${i}@example.nl`,
          telephoneNumber: '+31612345678',
          productId: 5001,
          quantity: 1,
        }),
      );
    const file = join(rig.dir, 'big.ndjson');
    await writeFile(file, lines.join('\n') + '\n');
    const tmp = await tmpfs('64k');
    await fill(tmp, 0);

    const first = startCli(['import', file], { ...rig.env, TMPDIR: tmp });
    expect(await first.exited, first.output()).toBe(5);
    expect(first.output()).toMatch(new RegExp(`could not write ${tmp}/bulkorder-ingest-\\d+-\\w+ \\(ENOSPC`));
    // The spill folder removed (tsx, which runs the CLI here, keeps its cache there too).
    expect((await readdir(tmp)).filter((name) => !name.startsWith('tsx-'))).toEqual(['filler']);
    expect(await queuedJobs(rig)).toBe(0);

    // Space again: TMPDIR pointed at a folder big enough (the 64 KiB one never holds a 1 MiB file's spill).
    await rig.startWorker({ concurrency: 8 });
    const again = startCli(['import', file, '--wait'], rig.env);
    expect(await again.exited, again.output()).toBe(0);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: count, duplicateOrdersAccepted: 0 });
    recordReliability({
      fault: 'a full temp folder (TMPDIR on a 64 KiB tmpfs) under the spill files of a 1 MiB NDJSON import',
      behaviour:
        'exit 5 SPILL_WRITE_FAILED naming the spill folder, nothing queued, no spill file left; with space the rerun delivered each order once',
      orders: count,
      lost: count - rig.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 300_000);
});
