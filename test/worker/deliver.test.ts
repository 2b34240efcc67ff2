import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { writeResults } from '../../src/batches/writeResults.js';
import type { ParkedRecord } from '../../src/deliveryJob.js';
import type { OrderPayload, RecordItem } from '../../src/ingest/types.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { originalRows } from '../../src/kinds/originalRows.js';
import { ORDER_FIELDS } from '../../src/ingest/orderFields.js';
import { importFile } from '../../src/importer/importFile.js';
import { KeptItems } from '../../src/importer/keptItems.js';
import { silentLogger } from '../../src/logger.js';
import { waitFor } from '../helpers/cliProcess.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('delivery end to end (real Redis, simulator, BullMQ workers)', () => {
  it('delivers every valid order exactly once, dead-letters refusals with their body, retries 5xx and honours 429', async () => {
    rig = await deliveryRig('mixed', {
      faults: {
        script: [
          {
            path: 'orders',
            status: 503,
            headers: { 'retry-after': '0' },
            body: { code: 'MAINTENANCE', message: 'back soon' },
          },
          {
            path: 'orders',
            status: 429,
            headers: { 'retry-after': '1' },
            body: { code: 'RATE_LIMITED', message: 'slow down' },
          },
          { path: 'orders', status: 502, body: '<html>bad gateway</html>' },
        ],
      },
    });
    const rows = [HEADER];
    for (let i = 1; i <= 12; i++) rows.push(orderRow(`GIFT-${i}`));
    rows.push(orderRow('GIFT-BAD', 5999)); // unknown product: the API refuses it with 422
    rows.push(orderRow('GIFT-MULTI', 5002, 2), orderRow('GIFT-MULTI', 5003, 1)); // one order, two lines
    rows.push(
      'GIFT-REJ,1001,Anna,de Vries,Keizersgracht,12a,1015 CX,Amsterdam,NL,nl,not-an-email,+31612345678,5001,1.5',
    );
    const file = await rig.writeFile('orders.csv', rows.join('\n') + '\n');

    // Keeps the 15 records it read (import --wait does, for its results file): in memory up to 15.
    const imported = await importFile(file, { keepItems: 15 }, rig.services.pipeline(silentLogger()));
    // The worker starts once the file is read: one that takes a job of a batch still being read waits 1.5-2.5 s to
    // ask again (batchGate-4.lua), which this test does not test (the next one imports with a worker running).
    await rig.startWorker({ concurrency: 4 });
    expect(imported.counts).toMatchObject({ orders: 15, valid: 14, rejected: 1, enqueued: 14 });
    const inMemory = (await imported.kept!.records()) as RecordItem<OrderPayload>[];
    expect(inMemory.map((item) => item.lines.join('+'))).toEqual([
      ...[...Array(13).keys()].map((i) => String(i + 2)),
      '15+16', // GIFT-MULTI's two lines
      '17',
    ]);
    const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 25_000,
      out: devNull(),
    });
    expect(settled).toBe(true);
    expect(batch).toMatchObject({ delivered: 13, dead: 1, held: 0 });

    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(13);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    expect(counters.statuses['503']).toBeGreaterThanOrEqual(1);
    expect(counters.statuses['429']).toBeGreaterThanOrEqual(1);
    const payloads = rig.simulator.orders().map((o) => o.payload as OrderPayload);
    const multi = payloads.find((p) => p.products.length === 2);
    expect(multi?.products).toEqual([
      { productId: 5002, quantity: 2 },
      { productId: 5003, quantity: 1 },
    ]);

    const deadKeys = await rig.services.redis.zrange(rig.services.keys.parkedIndex('dead'), '0', '-1');
    expect(deadKeys).toHaveLength(1);
    const dead = JSON.parse(
      (await rig.services.redis.get(rig.services.keys.parked('dead', deadKeys[0]!)))!,
    ) as ParkedRecord;
    // Its job named no file (the batch record keeps it): the dead letter names the batch's.
    expect(dead).toMatchObject({ httpStatus: 422, code: 'PRODUCT_UNKNOWN', orderRef: 'GIFT-BAD', lines: [14], file });
    expect(dead.body).toMatchObject({ code: 'PRODUCT_UNKNOWN' });
    // Its cells were left out of the job (the payload rebuilds them exactly) and come back from the payload.
    expect(dead.cells).toEqual([]);
    expect(originalRows(dead, ORDER_FIELDS, ORDERS.rebuildRows).rows[0]).toEqual(orderRow('GIFT-BAD', 5999).split(','));

    const resultsPath = `${rig.dir}/orders.results.csv`;
    const counts = await writeResults({
      file,
      ingest: {},
      batchId: imported.batchId,
      ledger: rig.services.ledger,
      outPath: resultsPath,
      kind: ORDERS,
    });
    expect(counts.byOutcome).toEqual({ delivered: 13, 'dead-lettered': 1, rejected: 1 });
    const results = await readFile(resultsPath, 'utf8');
    expect(results).toMatch(/GIFT-BAD,14,dead-lettered,,422,PRODUCT_UNKNOWN/);
    // From the records the import kept instead of the file read again: the same bytes.
    const fromKept = `${rig.dir}/orders.kept.results.csv`;
    const keptCounts = await writeResults(
      { file, ingest: {}, batchId: imported.batchId, ledger: rig.services.ledger, outPath: fromKept, kind: ORDERS },
      {
        items: inMemory,
      },
    );
    expect(keptCounts).toEqual(counts);
    expect(await readFile(fromKept, 'utf8')).toBe(results);
    imported.kept!.dispose();
    // A file longer than what may be kept in memory: its records wait in a temp file, and give the same bytes.
    const spooled = new KeptItems<OrderPayload>(5, rig.dir);
    for (const item of inMemory) await spooled.add(item);
    const fromSpool = `${rig.dir}/orders.spooled.results.csv`;
    const records = await spooled.records();
    expect(Array.isArray(records)).toBe(false);
    expect(records).toBeDefined();
    const spoolCounts = await writeResults(
      { file, ingest: {}, batchId: imported.batchId, ledger: rig.services.ledger, outPath: fromSpool, kind: ORDERS },
      {
        items: records!,
      },
    );
    spooled.dispose();
    expect(spoolCounts).toEqual(counts);
    expect(await readFile(fromSpool, 'utf8')).toBe(results);
    expect(results).toContain('products[0].productId: product 5999 is not in the catalogue'); // the API's details, not only its message
  }, 90_000);

  it('sends nothing twice when the same file is imported again, and again while the first import is running', async () => {
    rig = await deliveryRig('twice', { faults: { latencyMs: 20 } });
    const rows = [HEADER];
    for (let i = 1; i <= 40; i++) rows.push(orderRow(`TWICE-${i}`));
    const file = await rig.writeFile('twice.csv', rows.join('\n') + '\n');

    await rig.startWorker({ concurrency: 8 });
    const [first, concurrent] = await Promise.all([rig.importFile(file), rig.importFile(file)]);
    expect(first.counts.enqueued + concurrent.counts.enqueued).toBe(40);
    expect(first.counts.skippedQueued + concurrent.counts.skippedQueued).toBe(40);
    const owner = first.counts.enqueued > 0 ? first : concurrent;
    await followBatch(rig.services.batches, owner.batchId, { pollMs: 100, timeoutMs: 25_000, out: devNull() });
    if (first.counts.enqueued > 0 && concurrent.counts.enqueued > 0) {
      await followBatch(rig.services.batches, concurrent.batchId, { pollMs: 100, timeoutMs: 25_000, out: devNull() });
    }

    const again = await importFile(file, { keepItems: 39 }, rig.services.pipeline(silentLogger()));
    expect(again.counts).toMatchObject({ valid: 40, enqueued: 0, skippedDelivered: 40 });
    let spooled = 0; // 40 records, more than it may keep in memory: all of them in its temp file
    for await (const _item of (await again.kept!.records()) as AsyncIterable<unknown>) spooled++;
    again.kept!.dispose();
    expect(spooled).toBe(40);
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(40);
    expect(counters.duplicateOrdersAccepted).toBe(0);

    recordReliability({
      fault: 'the same file imported twice at once, then again',
      behaviour: 'one batch queued each order, the others skipped them; the re-import skipped all as delivered',
      orders: 40,
      lost: 40 - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
    const forced = await rig.importFile(file, true);
    expect(forced.counts.enqueued).toBe(40);
  }, 90_000);

  it('holds an order sent without an answer instead of sending it again', async () => {
    rig = await deliveryRig(
      'ambiguous',
      { faults: { script: [{ path: 'orders', status: 200, noAnswer: true, store: true }] } },
      { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300' },
    );
    const file = await rig.writeFile('one.csv', [HEADER, orderRow('AMB-1')].join('\n') + '\n');
    const imported = await rig.importFile(file);
    await rig.startWorker({ concurrency: 1 }); // once the file is read, as in the first test
    const { batch } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 20_000,
      out: devNull(),
    });
    expect(batch).toMatchObject({ delivered: 0, held: 1, dead: 0 });
    expect(rig.simulator.counters().ordersAccepted).toBe(1);
    const held = await rig.services.redis.zrange(rig.services.keys.parkedIndex('held'), '0', '-1');
    expect(held).toHaveLength(1);
    const again = await rig.importFile(file);
    expect(again.counts).toMatchObject({ enqueued: 0, skippedHeld: 1 });
    recordReliability({
      fault: 'request read by the API, never answered',
      behaviour: 'held for review after the headers timeout; a re-import does not send it',
      orders: 1,
      lost: 0,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 90_000);
});

describe('an order sent without an answer under BULKORDER_AMBIGUOUS=resend (at least once)', () => {
  it('is sent at most BULKORDER_ATTEMPTS times however often the breaker reopens, then held; the breaker holds its job back without spending attempts', async () => {
    // Every request read and stored, never answered (a server that stores, then hangs): each send is one more copy.
    rig = await deliveryRig(
      'resend',
      { faults: { noAnswerRate: 1 } },
      {
        BULKORDER_AMBIGUOUS: 'resend',
        BULKORDER_ATTEMPTS: '3',
        BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300',
        // The first unanswered request opens the breaker; it half-opens soon for one trial, which reopens it.
        BULKORDER_BREAKER_MIN_ATTEMPTS: '1',
        BULKORDER_BREAKER_MIN_ORDERS: '1',
        BULKORDER_BREAKER_SERVER_FAILING_PERCENT: '10',
        BULKORDER_BREAKER_OPEN_MS: '300',
        BULKORDER_BREAKER_MAX_OPEN_MS: '600',
        BULKORDER_BREAKER_TRIAL_CALLS: '1',
      },
    );
    const file = await rig.writeFile('resend.csv', [HEADER, orderRow('RS-1'), orderRow('RS-2')].join('\n') + '\n');
    const imported = await rig.importFile(file);
    const worker = await rig.startWorker({ concurrency: 2 }); // once the file is read, as in the first test
    const spent: number[] = [];
    worker.worker.on('completed', (job) => spent.push(job.attemptsMade));
    const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 60_000,
      out: devNull(),
    });
    expect(settled, JSON.stringify(batch)).toBe(true);
    // Both held for a person (each may exist, three times over), none delivered or dead-lettered.
    expect(batch).toMatchObject({ enqueued: 2, delivered: 0, held: 2, dead: 0 });
    const entries = await rig.services.ledger.getMany(
      (await rig.services.redis.zrange(rig.services.keys.parkedIndex('held'), '0', '-1')).sort(),
    );
    expect(entries.map((entry) => entry?.attempts)).toEqual([3, 3]);
    // Counted at the API: three sends of each, the first two before and while the breaker reopened.
    const counters = rig.simulator.counters();
    expect(counters.apiRequests.business).toBe(6);
    expect(counters.ordersAccepted).toBe(6);
    // The job of the two completed in its first attempt (BullMQ counts the one that completes): each
    // unanswered send came back while the breaker held the job back, and waiting spent nothing.
    await waitFor(async () => spent.length === 1, 'the job completed');
    expect(spent).toEqual([1]);
    recordReliability({
      fault: 'every request stored and never answered, BULKORDER_AMBIGUOUS=resend, the breaker reopening on each trial',
      behaviour:
        'each order sent BULKORDER_ATTEMPTS (3) times in all (every unanswered send counts: each may store it), then held for review; the breaker held its job back without spending an attempt, so its other orders keep theirs',
      orders: 2,
      lost: 0,
      duplicates: counters.duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 90_000);
});

function devNull(): NodeJS.WriteStream {
  return { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;
}
