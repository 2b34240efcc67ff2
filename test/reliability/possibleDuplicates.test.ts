/**
 * "Stored, then 500": under the default policy (5xx is temporary, so it is retried) the API may
 * keep an order twice. Those orders must be visible: marked in the results file and counted in
 * the batch. Every create carries the order key as Idempotency-Key, so an API that honours it
 * keeps one copy.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { POSSIBLE_DUPLICATE_CODE, writeResults } from '../../src/batches/writeResults.js';
import { POSSIBLE_DUPLICATE } from '../../src/ledger/ledger.js';
import { ORDERS } from '../../src/kinds/orders.js';
import type { SimulatorOptions } from '../../src/simulator/index.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;
const ORDER_COUNT = 40;
const FAULTS: NonNullable<SimulatorOptions['faults']> = { storedThenErrorRate: 0.1, serverErrorRate: 0.05 };

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The RELIABILITY.md row of one run: its counts come from the batch and the simulator. */
function recordRun(fault: string, behaviour: string, r: Awaited<ReturnType<typeof run>>): void {
  recordReliability({
    fault,
    behaviour,
    orders: ORDER_COUNT,
    lost: ORDER_COUNT - r.batch.delivered - r.batch.dead - r.batch.held,
    duplicates: r.counters.duplicateOrdersAccepted,
    held: r.batch.held,
  });
}

async function run(name: string, simulator: SimulatorOptions, env: Record<string, string> = {}) {
  rig = await deliveryRig(name, { faults: FAULTS, ...simulator }, env);
  const rows = [HEADER];
  for (let i = 1; i <= ORDER_COUNT; i++) rows.push(orderRow(`DUP-${i}`));
  const file = await rig.writeFile(`${name}.csv`, rows.join('\n') + '\n');
  const imported = await rig.importFile(file);
  await rig.startWorker({ concurrency: 4 }); // once the file is read: its chunks go at once
  const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
    pollMs: 100,
    timeoutMs: 45_000,
    out: quiet,
  });
  expect(settled).toBe(true);
  const resultsPath = join(rig.dir, `${name}.results.csv`);
  const counts = await writeResults({
    file,
    ingest: {},
    batchId: imported.batchId,
    ledger: rig.services.ledger,
    outPath: resultsPath,
    kind: ORDERS,
  });
  const results = parse<Record<string, string>>(await readFile(resultsPath), { columns: true, bom: true });
  // Copies the API keeps, per order key (the Idempotency-Key each create carried).
  const copies = new Map<string, number>();
  for (const order of rig.simulator.orders())
    copies.set(order.idempotencyKey ?? '', (copies.get(order.idempotencyKey ?? '') ?? 0) + 1);
  const marked = new Set(results.filter((r) => r.errorCode === POSSIBLE_DUPLICATE_CODE).map((r) => r.orderKey));
  const twice = [...copies].filter(([, n]) => n > 1).map(([key]) => key);
  return { batch, counts, results, copies, marked, twice, counters: rig.simulator.counters() };
}

describe('possible duplicates are visible; Idempotency-Key removes them where honoured', () => {
  it('"stored, then 500" under the default policy: every order the API kept twice is marked in the results and the batch, and an unmarked order was kept once', async () => {
    const r = await run('dup-marked', {});
    expect(r.batch).toMatchObject({ delivered: ORDER_COUNT, dead: 0, held: 0 });
    expect(r.counters.faults.storedThenError).toBeGreaterThan(0);
    expect(r.twice.length).toBeGreaterThan(0);
    for (const key of r.twice) expect(r.marked).toContain(key);
    for (const row of r.results.filter((x) => !r.marked.has(x.orderKey))) expect(r.copies.get(row.orderKey!)).toBe(1);
    for (const row of r.results.filter((x) => r.marked.has(x.orderKey)))
      expect(row).toMatchObject({ outcome: 'delivered', message: POSSIBLE_DUPLICATE });
    expect(r.batch.possibleDuplicates).toBe(r.marked.size);
    expect(r.counts.possibleDuplicates).toBe(r.marked.size);
    // Plain 5xx (not stored) also mark: the client cannot tell the two apart, hence "possible".
    expect(r.marked.size).toBeGreaterThanOrEqual(r.twice.length);
    expect(r.counters.idempotencyKeys).toBe(r.counters.apiRequests.business - r.counters.faults.serverError);
    recordRun(
      '"stored, then 500" on 10% and plain 5xx on 5% of requests, default policy, API ignores Idempotency-Key',
      `all delivered; the ${r.twice.length} orders the API kept twice are among the ${r.marked.size} marked "possible duplicate" in results and batch; every unmarked order kept once`,
      r,
    );
  }, 60_000);

  it('the same faults at an API that honours Idempotency-Key: the retry gets the first answer, no order is kept twice', async () => {
    const r = await run('dup-honoured', { profile: { idempotency: 'honour' } });
    expect(r.batch).toMatchObject({ delivered: ORDER_COUNT, dead: 0, held: 0 });
    expect(r.counters.faults.storedThenError).toBeGreaterThan(0);
    expect(r.twice).toEqual([]);
    expect(r.counters.duplicateOrdersAccepted).toBe(0);
    expect(r.counters.idempotentReplays).toBeGreaterThanOrEqual(r.counters.faults.storedThenError);
    expect(r.copies.size).toBe(ORDER_COUNT);
    recordRun(
      '"stored, then 500" on 10% and plain 5xx on 5% of requests, API honours Idempotency-Key',
      `all delivered once: ${r.counters.idempotentReplays} retries answered from the first create; ${r.marked.size} still marked "possible duplicate" (the client cannot know)`,
      r,
    );
  }, 60_000);

  it('BULKORDER_IDEMPOTENCY_HEADER=none sends no key', async () => {
    const r = await run('dup-off', { faults: {} }, { BULKORDER_IDEMPOTENCY_HEADER: 'none' });
    expect(r.batch).toMatchObject({ delivered: ORDER_COUNT, possibleDuplicates: 0 });
    expect(r.counters.idempotencyKeys).toBe(0);
  }, 60_000);

  it('doubt only where there is doubt: a 503 with Retry-After (the server did not process it) flags nothing; a 500, 502 and 504 stay possible', async () => {
    const notProcessed = Array.from({ length: 12 }, () => ({
      status: 503,
      headers: { 'retry-after': '0' },
      body: { code: 'UNAVAILABLE', message: 'try later' },
      path: 'orders' as const,
    }));
    const r = await run('dup-retry-after', { faults: { script: notProcessed } });
    expect(r.batch).toMatchObject({ delivered: ORDER_COUNT, dead: 0, held: 0, possibleDuplicates: 0 });
    expect(r.counters.faults.scripted).toBe(12);
    expect(r.marked.size).toBe(0);
    expect(r.copies.size).toBe(ORDER_COUNT);
    await rig!.close();
    const maybe = [500, 502, 504].map((status) => ({ status, path: 'orders' as const }));
    rig = undefined;
    const m = await run('dup-5xx', { faults: { script: maybe } });
    expect(m.batch).toMatchObject({ delivered: ORDER_COUNT, dead: 0, held: 0, possibleDuplicates: 3 });
    expect(m.marked.size).toBe(3);
    recordRun(
      '503 + Retry-After on 12 requests (the server says it did not process them), then 500, 502 and 504 once each',
      'all delivered once; no order flagged "possible duplicate" after a 503 with Retry-After, the 3 orders answered 500/502/504 flagged',
      m,
    );
  }, 90_000);
});
