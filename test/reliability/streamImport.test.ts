import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { importFile, type ImportOptions } from '../../src/importer/importFile.js';
import { FileRefusedError } from '../../src/errors.js';
import type { ImportDeps } from '../../src/services.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import type { IngestOptions, RecordSource } from '../../src/ingest/openRecordSource.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ORDERS = 3000;
/** A grouped file read as a large one (it streams), in small reads, judged by no share (it queues from the first batch). */
const streaming: ImportOptions = { spillThresholdBytes: 0, chunkBytes: 16 * 1024, maxRejectedPercent: 100 };

function file(count: number, from = 1): string {
  return [HEADER, ...Array.from({ length: count }, (_, i) => orderRow(`S-${from + i}`))].join('\n') + '\n';
}

/**
 * The rig's pipeline, watched: the source the import opens (its rows read when the first jobs were
 * added), and, when `failAfter` is given, that source's records stopping with a refusal after that
 * many batches (a file refused late: what the shape scan rules out for CSV, forced here to see what
 * the importer leaves behind).
 */
function watched(
  deps: ImportDeps<OrderPayload>,
  failAfter?: number,
): {
  deps: ImportDeps<OrderPayload>;
  rowsAtFirstJobs: () => number | undefined;
  source: () => RecordSource<OrderPayload>;
} {
  let source: RecordSource<OrderPayload> | undefined;
  let rowsAtFirstJobs: number | undefined;
  const addBulk = deps.queue.addBulk.bind(deps.queue);
  const queue = Object.create(deps.queue) as typeof deps.queue;
  queue.addBulk = async (jobs) => {
    rowsAtFirstJobs ??= source?.stats().rows;
    return addBulk(jobs);
  };
  const openSource = async (path: string, options: IngestOptions): Promise<RecordSource<OrderPayload>> => {
    const opened = await deps.kind.openSource(path, options);
    source = opened;
    if (failAfter === undefined) return opened;
    const batches = opened.batches.bind(opened);
    opened.batches = async function* () {
      let n = 0;
      for await (const batch of batches()) {
        if (n++ === failAfter) throw new FileRefusedError('CSV_UNREADABLE', path, 'refused late (injected)');
        yield batch;
      }
    };
    return opened;
  };
  return {
    deps: { ...deps, queue, kind: { ...deps.kind, openSource } },
    rowsAtFirstJobs: () => rowsAtFirstJobs,
    source: () => source!,
  };
}

describe('import in one pass: a grouped file streams into the queue', () => {
  it('the first jobs are queued while the file is still read; every order once', async () => {
    rig = await deliveryRig('stream-import');
    const path = await rig.writeFile('grouped.csv', file(ORDERS));
    const run = watched(rig.services.pipeline(rig.logger));
    const result = await importFile(path, streaming, run.deps);
    expect(run.source().streamed()).toBe(true);
    expect(result.counts).toMatchObject({ rows: ORDERS, valid: ORDERS, enqueued: ORDERS });
    expect(run.rowsAtFirstJobs()).toBeGreaterThan(0);
    // An order leaves the stream once 1,000 rows passed it, and the first 500 go to Redis together: about 1,600 of 3,000.
    expect(run.rowsAtFirstJobs()).toBeLessThan(2000);
    // BULKORDER_ORDERS_PER_JOB orders a job (the rig's configuration: the default)
    expect(await rig.services.queue.count()).toBe(Math.ceil(ORDERS / rig.services.delivery.ordersPerJob));
  });

  it('stopped late (a refusal after queueing began): what was queued is whole, queued and in the ledger; a re-run finishes the file exactly once', async () => {
    rig = await deliveryRig('stream-late');
    const path = await rig.writeFile('grouped.csv', file(ORDERS));
    const run = watched(rig.services.pipeline(rig.logger), 5);
    const refused = await importFile(path, streaming, run.deps).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(FileRefusedError);
    const [batch] = await rig.services.batches.list(10);
    expect(batch).toMatchObject({ importState: 'failed', failure: { code: 'CSV_UNREADABLE', exitCode: 3 } });
    const queued = batch!.enqueued;
    expect(queued).toBeGreaterThan(0);
    expect(queued).toBeLessThan(ORDERS);
    // Nothing half-queued: no reservation waits for its job, and every queued order is in BullMQ.
    expect(await rig.services.redis.zcard(rig.services.keys.unqueued)).toBe(0);
    expect(await rig.services.queue.count()).toBe(Math.ceil(queued / rig.services.delivery.ordersPerJob));
    const keys = Array.from({ length: ORDERS }, (_, i) => `ref.1001.S-${i + 1}`);
    const entries = await rig.services.ledger.getMany(keys);
    expect(entries.filter((entry) => entry?.state === 'queued').length).toBe(queued);
    expect(entries.slice(queued).every((entry) => entry === undefined)).toBe(true); // in file order: the first ones

    await rig.startWorker();
    const again = await importFile(path, { ...streaming }, rig.services.pipeline(rig.logger));
    expect(again.counts.enqueued + again.counts.skippedQueued + again.counts.skippedDelivered).toBe(ORDERS);
    for (let i = 0; i < 600 && rig.simulator.counters().ordersAccepted < ORDERS; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(ORDERS);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: `an import of a ${ORDERS}-order file grouped in one stream stopped by a refusal after ${queued} orders were queued`,
      behaviour:
        'exit 3; the orders queued before the stop are whole, reserved and in the queue (none waits for its job); the re-run queued the rest and skipped them: every order delivered once',
      orders: ORDERS,
      lost: ORDERS - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 120_000);

  for (const [what, last] of [
    ['a NUL byte', orderRow('S-LAST').replace('Keizersgracht', 'Keizers\u0000gracht')],
    ['binary bytes (invalid UTF-8)', orderRow('S-LAST').replace('Keizersgracht', 'Keizers\u00ffgracht')],
    ['a quote never closed', orderRow('S-LAST').replace('Keizersgracht', '"Keizersgracht')],
  ] as const) {
    it(`its last row holds ${what}: refused (exit 3) before anything is queued`, async () => {
      rig = await deliveryRig('stream-refused');
      const text = file(ORDERS) + last + '\n';
      // Latin-1 bytes: the \u00ff is the lone byte 0xFF, never valid UTF-8.
      const path = join(rig.dir, 'damaged.csv');
      await writeFile(path, Buffer.from(text, what === 'binary bytes (invalid UTF-8)' ? 'latin1' : 'utf8'));
      const refused = await importFile(path, streaming, rig.services.pipeline(rig.logger)).then(
        () => undefined,
        (error: unknown) => error as FileRefusedError,
      );
      expect(refused).toBeInstanceOf(FileRefusedError);
      expect(refused!.exitCode).toBe(3);
      expect(await rig.services.queue.count()).toBe(0);
      expect(await rig.services.ledger.getMany(['ref.1001.S-1', `ref.1001.S-${ORDERS}`])).toEqual([
        undefined,
        undefined,
      ]);
    });
  }
});
