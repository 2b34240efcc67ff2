/**
 * A file that grows while it is imported (issue 37 item 5: a drop-folder copy that stalled longer than
 * --stable was half-imported and filed in done/). The import compares the file's inode, size and
 * mtime at the start of its read with the end (and before each round it queues while it reads); nothing
 * of a batch is sent while its file is still read (batchGate: until `readAt`), so a file that changed is refused whole:
 * FILE_CHANGED_WHILE_READ, exit 3, its batch cancelled, not one order sent. Real CLI processes, real
 * Redis, the simulator counting what reached the API. In the faults tier (test/tiers.ts): each test holds Redis
 * from an import of thousands of orders while the file grows, then delivers them all; a file appended to while
 * its scan read it (before anything exists) is test/reliability/fileGrowthScan.test.ts, in the fast tier.
 */
import { appendFile, copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isSettled, type Batch } from '../../src/batches/batchStore.js';
import { deliveryRig, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { batchesNow } from '../helpers/importRuns.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { runCli } from '../helpers/runCli.js';
import { startTcpGate, type TcpGate } from '../helpers/tcpGate.js';

let rig: DeliveryRig | undefined;
let gate: TcpGate | undefined;
afterEach(async () => {
  await killAllCli();
  await gate?.close();
  gate = undefined;
  await rig?.close().catch(() => undefined);
  rig = undefined;
});

/**
 * Over 1 MiB and 10,000 rows: a file that streams, so its import queues while it still reads (a smaller
 * one is read whole before its first order is queued, and then sent while the rest is queued).
 */
const ORDERS = 12_000;
const MORE = 500;

/** Rows `<prefix>-<from>`... as the writer appends them. */
function moreRows(prefix: string, from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => orderRow(`${prefix}-${from + i}`)).join('\n') + '\n';
}

/** The rig's REDIS_URL through a gate the test holds while it looks (an import of a few thousand orders is quick). */
async function gatedEnv(r: DeliveryRig): Promise<Record<string, string>> {
  const url = r.config.redisUrl.reveal();
  gate = await startTcpGate(url.replace(/^rediss?:/, 'http:'));
  const gated = new URL(url);
  gated.host = new URL(gate.url).host;
  return { ...r.env, REDIS_URL: gated.toString(), LOG_LEVEL: 'warn' };
}

/**
 * Holds the gated process's Redis once its batch, still importing, is `ready` (e.g. has queued 500 orders),
 * runs `meanwhile` (the writer appends), then lets it go on. Returns the batch as it was then.
 */
async function whileImporting(
  r: DeliveryRig,
  ready: { what: string; is: (batch: Batch) => boolean },
  meanwhile: (batch: Batch) => Promise<void>,
): Promise<Batch> {
  let batch: Batch | undefined;
  await waitFor(
    async () => {
      gate!.hold();
      batch = (await batchesNow(r.config.redisUrl.reveal(), r.prefix))[0];
      if (batch !== undefined && ready.is(batch)) return true;
      gate!.release();
      await new Promise((resolve) => setTimeout(resolve, 10));
      return false;
    },
    ready.what,
    120_000,
  );
  try {
    expect(batch?.importState, 'the import finished before the test could look').toBe('importing');
    await meanwhile(batch!);
  } finally {
    gate!.release();
  }
  return batch!;
}

/** Its batch has queued 500 orders and its file is still read (`readAt` unset). */
const QUEUED_500 = {
  what: '500 orders queued',
  is: (batch: Batch) => {
    if (batch.enqueued < 500) return false;
    expect(batch.readAt, 'the read ended before the file could grow under it').toBeUndefined();
    return true;
  },
};

/** Waits until the batch has settled (every queued order ended) and returns it. */
async function settled(r: DeliveryRig, id: string): Promise<Batch> {
  await waitFor(
    async () => {
      const b = await r.services.batches.get(id);
      return b !== undefined && isSettled(b);
    },
    `batch ${id} settled`,
    180_000,
  );
  return (await r.services.batches.get(id))!;
}

describe('a file that grows while it is imported is refused whole, never half', () => {
  it('CLI import, appended to once its batch has queued 500 orders (a worker delivering all along): exit 3 FILE_CHANGED_WHILE_READ naming the file, not one order sent; a re-run of the complete file delivers every order once', async () => {
    rig = await deliveryRig('grow-cli');
    const file = await rig.writeFile('growing.csv', ordersCsv('G', ORDERS));
    await rig.startWorker({ concurrency: 50 });
    const importer: CliProcess = startCli(['import', file], await gatedEnv(rig));
    const batch = await whileImporting(rig, QUEUED_500, () => appendFile(file, moreRows('G', ORDERS + 1, MORE)));
    const exit = await importer.exited;
    expect(exit, importer.output()).toBe(3);
    expect(importer.output()).toContain('FILE_CHANGED_WHILE_READ');
    expect(importer.output()).toContain('growing.csv');

    const ended = await settled(rig, batch.id);
    expect(ended).toMatchObject({ importState: 'failed', failure: { code: 'FILE_CHANGED_WHILE_READ', exitCode: 3 } });
    expect(ended.enqueued).toBeGreaterThanOrEqual(500);
    expect(ended.delivered).toBe(0);
    expect(ended.dead).toBe(ended.enqueued); // each ended BATCH_CANCELLED, never sent
    const sentOfHalf = rig.simulator.counters().ordersAccepted;
    expect(sentOfHalf).toBe(0);

    // The writer is done: the complete file goes whole.
    const rerun = await runCli(['import', file, '--wait', '--timeout', '200'], {
      ...rig.env,
      LOG_LEVEL: 'warn',
    });
    expect(rerun.code, rerun.output).toBe(0);
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS + MORE);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: `a ${ORDERS}-order file appended to (${MORE} more) while \`import\` read it, ${ended.enqueued} orders queued, a worker delivering`,
      behaviour:
        'exit 3 FILE_CHANGED_WHILE_READ naming the file; nothing of a batch goes while its file is read, so 0 sent; the batch cancelled (its orders dead-lettered BATCH_CANCELLED); the complete file re-run (no flag) delivered every order once',
      orders: ORDERS + MORE,
      lost: ORDERS + MORE - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 400_000);

  it('watch: a file that went on growing in processing/ after --stable is filed in failed/ with FILE_CHANGED_WHILE_READ, never in done/, and none of it sent; dropped again complete, it goes whole', async () => {
    rig = await deliveryRig('grow-watch');
    const drop = join(rig.dir, 'drop');
    await mkdir(join(drop, 'inbox'), { recursive: true });
    await writeFile(join(drop, 'inbox', 'stalled.csv'), ordersCsv('W', ORDERS));
    await rig.startWorker({ concurrency: 50 });
    // The copy stalled (closed, so nothing shows it open for writing) longer than --stable: the watcher claims it.
    const watcher = startCli(
      ['watch', drop, '--once', '--json', '--stable', '0.3', '--poll', '0.05'],
      await gatedEnv(rig),
    );
    // ... and the copy goes on: its writer's handle follows the file into processing/ (a rename keeps the inode).
    const batch = await whileImporting(rig, QUEUED_500, async (importing) => {
      expect(importing.file, 'the claimed file in processing/').toContain(join(drop, 'processing'));
      await appendFile(importing.file, moreRows('W', ORDERS + 1, MORE));
    });
    // A file refused whole is a failed file: `watch --once` exits 4 (something needs a person).
    const exit = await watcher.exited;
    expect(exit, watcher.output()).toBe(4);
    const done = (await readdir(join(drop, 'done')).catch(() => [])).filter((n) => n.endsWith('stalled.csv'));
    const failed = (await readdir(join(drop, 'failed'))).filter((n) => n.endsWith('stalled.csv'));
    expect(done).toEqual([]);
    expect(failed).toHaveLength(1);
    const summaryName = (await readdir(join(drop, 'failed'))).find((n) => n.endsWith('.summary.json'));
    const summary = JSON.parse(await readFile(join(drop, 'failed', summaryName!), 'utf8')) as Record<string, unknown>;
    expect(JSON.stringify(summary)).toContain('FILE_CHANGED_WHILE_READ');

    const ended = await settled(rig, batch.id);
    expect(ended.delivered).toBe(0);
    expect(ended.dead).toBe(ended.enqueued);
    expect(rig.simulator.counters().ordersAccepted).toBe(0);

    // The copy finished: the complete file dropped again goes whole, to done/, every order once.
    await copyFile(join(drop, 'failed', failed[0]!), join(drop, 'inbox', 'stalled.csv'));
    const again = await runCli(['watch', drop, '--once', '--stable', '0.3', '--poll', '0.05'], {
      ...rig.env,
      LOG_LEVEL: 'warn',
    });
    expect(again.code, again.output).toBe(0);
    expect((await readdir(join(drop, 'done'))).filter((n) => n.endsWith('stalled.csv'))).toHaveLength(1);
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS + MORE);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: `a drop-folder file (${ORDERS} orders) claimed after --stable, then grown by ${MORE} more in processing/ while imported (${ended.enqueued} queued)`,
      behaviour:
        'refused whole: FILE_CHANGED_WHILE_READ, filed in failed/ with its summary, never in done/; its batch cancelled, 0 of it sent; the complete file dropped again went to done/, every order once',
      orders: ORDERS + MORE,
      lost: ORDERS + MORE - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 400_000);
});

describe('a file read to its end is sent while its import still queues the rest', () => {
  it("CLI import of 2,500 orders (read whole before its first order is queued): once read and a canary's worth queued, the worker delivers what is queued while the importer cannot queue more; then every order once", async () => {
    rig = await deliveryRig('read-then-flow');
    const file = await rig.writeFile('read.csv', ordersCsv('F', 2_500));
    await rig.startWorker({ concurrency: 50 });
    const importer: CliProcess = startCli(['import', file], await gatedEnv(rig));
    let queuedThen = 0;
    let sentWhileImporting = 0;
    await whileImporting(
      rig,
      { what: 'read, 20 orders queued', is: (batch) => batch.readAt !== undefined && batch.enqueued >= 20 },
      async (batch) => {
        // The importer's Redis is held: what the worker sends now was queued before, by a batch still importing.
        queuedThen = batch.enqueued;
        await waitFor(
          () => Promise.resolve(rig!.simulator.counters().ordersAccepted >= queuedThen),
          `the ${queuedThen} orders queued sent`,
          120_000,
        );
        sentWhileImporting = rig!.simulator.counters().ordersAccepted;
        const still = (await batchesNow(rig!.config.redisUrl.reveal(), rig!.prefix))[0];
        expect(still?.importState).toBe('importing');
      },
    );
    expect(queuedThen).toBeLessThan(2_500);
    expect(sentWhileImporting).toBeGreaterThanOrEqual(queuedThen);
    expect(await importer.exited, importer.output()).toBe(0);
    await waitFor(
      () => Promise.resolve(rig!.simulator.counters().ordersAccepted >= 2_500),
      'every order sent',
      180_000,
    );
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(2_500);
    expect(counters.duplicateOrdersAccepted).toBe(0);
  }, 400_000);
});
