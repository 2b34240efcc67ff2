/**
 * Results and rejects on a real small file system (issue 26, item 9): a 64 KiB tmpfs filled up,
 * and one remounted read-only. Needs root to mount; skipped where mounting is not allowed.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
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

describe.skipIf(!mountable)('results and rejects on a full or read-only disk', () => {
  it('a disk full while writing results: exit 5 naming the path, no file cut mid-row under any name; the rerun writes them and sends nothing again', async () => {
    rig = await deliveryRig('disk-full');
    const dir = await tmpfs('64k');
    const file = join(dir, 'night.csv');
    await writeFile(file, ordersCsv('FULL', 150));
    // Leave a little room: the results (wider than the input) start, then hit ENOSPC.
    const free = await statfs(dir);
    await writeFile(join(dir, 'filler'), Buffer.alloc(Math.max(0, Number(free.bavail) * Number(free.bsize) - 4096)));
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

  it('a read-only input folder: a file without rejects imports (the rejects file is never opened); one with rejects exits 2 naming the rejects path, no stack trace', async () => {
    rig = await deliveryRig('disk-ro');
    const dir = await tmpfs('256k');
    await writeFile(join(dir, 'good.csv'), ordersCsv('RO', 3));
    await writeFile(
      join(dir, 'mixed.csv'),
      [
        HEADER,
        orderRow('ROM-1'),
        'ROM-2,1001,Anna,de Vries,Keizersgracht,12,1015 CX,Amsterdam,NL,nl,not-an-email,+31612345678,5001,1',
      ].join('\n') + '\n',
    );
    execFileSync('mount', ['-o', 'remount,ro', dir]);

    const good = startCli(['import', join(dir, 'good.csv')], rig.env);
    expect(await good.exited, good.output()).toBe(0);
    const mixed = startCli(['import', join(dir, 'mixed.csv')], rig.env);
    expect(await mixed.exited, mixed.output()).toBe(2);
    expect(mixed.output()).toContain(`cannot write ${join(dir, 'mixed.csv')}.rejects.csv (EROFS)`);
    expect(mixed.output()).not.toMatch(/\n\s+at /); // no stack trace
    expect(await readdir(dir)).toEqual(['good.csv', 'mixed.csv']);
    recordReliability({
      fault: 'a read-only input folder (tmpfs remounted ro)',
      behaviour:
        'a file without rejects imported (the rejects file is opened only when needed); one with rejects exit 2 naming the rejects path (EROFS), no stack trace',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 180_000);
});
