import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
});

describe('bulkorder watch (the real CLI)', () => {
  it('--once works off the inbox and exits 0; a file with rejected rows makes it exit 4', async () => {
    rig = await deliveryRig('watch-cli');
    const inbox = join(rig.dir, 'drop', 'inbox');
    await mkdir(inbox, { recursive: true });
    await writeFile(join(inbox, 'good.csv'), [HEADER, orderRow('W-1'), orderRow('W-2')].join('\n') + '\n');
    await rig.startWorker({ concurrency: 2 });
    const first = await runCli(
      ['watch', join(rig.dir, 'drop'), '--once', '--stable', '0.2', '--poll', '0.05'],
      rig.env,
    );
    expect(first.code).toBe(0);
    expect(first.output).toMatch(/1 done, 0 failed/);
    expect((await readdir(join(rig.dir, 'drop', 'done'))).filter((n) => n.endsWith('.good.csv'))).toHaveLength(1);

    await writeFile(
      join(inbox, 'bad.csv'),
      [
        HEADER,
        orderRow('W-3'),
        'W-4,1001,Anna,de Vries,Keizersgracht,12a,1015 CX,Amsterdam,NL,nl,x,+31612345678,5001,1',
      ].join('\n') + '\n',
    );
    const second = await runCli(
      ['watch', join(rig.dir, 'drop'), '--once', '--stable', '0.2', '--poll', '0.05'],
      rig.env,
    );
    expect(second.code).toBe(4);
    expect(second.output).toMatch(/1 done, 0 failed; 1 need attention/);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 3, duplicateOrdersAccepted: 0 });
  });

  it('stops on SIGTERM and leaves a file it is following in processing/, where the next watcher (delivering itself) finishes it', async () => {
    rig = await deliveryRig('watch-sigterm');
    const drop = join(rig.dir, 'drop');
    await mkdir(join(drop, 'inbox'), { recursive: true });
    await writeFile(join(drop, 'inbox', 'slow.csv'), [HEADER, orderRow('S-1'), orderRow('S-2')].join('\n') + '\n');
    // No worker yet: the batch cannot settle, so the watcher is still following it when stopped.
    const watcher = startCli(['watch', drop, '--stable', '0.2', '--poll', '0.05'], rig.env);
    await waitFor(async () => (await rig!.services.batches.list(10)).length === 1, 'the file to be imported');
    watcher.child.kill('SIGTERM');
    expect(await watcher.exited).toBe(0);
    expect((await readdir(join(drop, 'processing'))).filter((n) => !n.startsWith('.'))).toHaveLength(1);

    const next = startCli(['watch', drop, '--once', '--deliver', '--stable', '0.2', '--poll', '0.05'], rig.env); // delivers itself
    expect(await next.exited).toBe(0);
    expect((await rig.services.batches.list(10)).length).toBe(1); // followed, not imported again
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 2, duplicateOrdersAccepted: 0 });
  }, 120_000); // two real processes started one after the other: under load the default 30 s ran out
});
