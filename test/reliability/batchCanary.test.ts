import { afterEach, describe, expect, it } from 'vitest';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';
import { listHeldBatches, readBatchCircuit, readBatchCircuitEvents } from '../../src/batches/batchCircuit.js';
import type { Batch } from '../../src/batches/batchStore.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A product the simulator's catalogue does not sell: every order naming it is refused 422 PRODUCT_UNKNOWN. */
const UNKNOWN_PRODUCT = 9999;

function badCsv(prefix: string, count: number): string {
  const rows = [HEADER];
  for (let i = 1; i <= count; i++) rows.push(orderRow(`${prefix}-${i}`, UNKNOWN_PRODUCT, 1, 1001 + (i % 3)));
  return rows.join('\n') + '\n';
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 180_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function batchOf(r: DeliveryRig, id: string): Promise<Batch> {
  const batch = await r.services.batches.get(id);
  if (batch === undefined) throw new Error(`no batch ${id}`);
  return batch;
}

/** Orders the simulator stored more than once (by orderRef). */
function storedTwice(r: DeliveryRig): number {
  const refs = r.simulator.orders().map((o) => (o.payload as { orderRef?: string }).orderRef ?? o.orderId);
  return refs.length - new Set(refs).size;
}

describe('a circuit per batch beside the API breaker (issue 36)', () => {
  it('a batch of unknown products is held after its canary; a good batch beside it is delivered in full; cancel ends the rest unsent', async () => {
    rig = await deliveryRig('canary-bad', { retainOrders: true });
    const good = await rig.importFile(await rig.writeFile('good.csv', ordersCsv('GOOD', 200)));
    const bad = await rig.importFile(await rig.writeFile('bad.csv', badCsv('BAD', 2000)));
    await rig.startWorker();
    const r = rig;
    await until(
      'the good batch delivered',
      () => batchOf(r, good.batchId),
      (b) => b.delivered === 200,
    );
    const held = await until(
      'the bad batch held',
      () => readBatchCircuit(r.services.redis, r.services.keys, bad.batchId),
      (c) => c.state === 'held',
    );
    expect(held.code).toBe('PRODUCT_UNKNOWN');
    expect(held.status).toBe(422);
    const refusedPosts = () => r.simulator.counters().errors.PRODUCT_UNKNOWN ?? 0;
    // The canary (20) and what was in flight when it spoke: never the whole batch.
    expect(refusedPosts()).toBeLessThanOrEqual(60);
    const listed = await listHeldBatches(r.services.redis, r.services.keys);
    expect(listed.map((c) => c.batchId)).toEqual([bad.batchId]);
    // Held, not dead-lettered: nothing of the bad batch is parked.
    expect((await batchOf(r, bad.batchId)).dead).toBe(0);

    const status = await runCli(['status'], r.env);
    expect(status.output).toContain(bad.batchId);
    expect(status.output).toContain('PRODUCT_UNKNOWN');

    // What the notifications send (batch-held): the batch, the API's code, samples of refused orders.
    const heldEvents = await readBatchCircuitEvents(r.services.redis, r.services.keys, 0);
    expect(heldEvents.map((e) => [e.type, e.batchId, e.circuit.code])).toEqual([
      ['held', bad.batchId, 'PRODUCT_UNKNOWN'],
    ]);
    expect(heldEvents[0]!.circuit.samples.length).toBeGreaterThan(0);

    const postsBefore = refusedPosts();
    const cancel = await runCli(['batch', 'cancel', bad.batchId, '--why', 'wrong catalogue', '--json'], r.env);
    expect(cancel.code).toBe(0);
    const ended = await until(
      'every order of the bad batch ended',
      () => batchOf(r, bad.batchId),
      (b) => b.delivered + b.dead + b.held >= 2000,
    );
    expect(ended.delivered).toBe(0);
    expect(ended.dead).toBe(2000);
    expect(refusedPosts()).toBe(postsBefore);
    // A job settles its records before BullMQ finishes it: the last one may still be active for a moment.
    const counts = await until(
      'no job of the cancelled batch left',
      () => r.services.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized'),
      (c) => Object.values(c).reduce((a, b) => a + b, 0) === 0,
    );
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    const shown = await runCli(['batch', 'show', bad.batchId, '--json'], r.env);
    expect(JSON.parse(shown.output)).toMatchObject({
      state: 'cancelled',
      action: { kind: 'cancelled', why: 'wrong catalogue' },
    });
    expect(storedTwice(r)).toBe(0);
    recordReliability({
      fault: 'one batch of 2,000 orders names a product the API does not sell, beside a good batch of 200',
      behaviour: `the good batch delivered in full; the bad one held by its canary after ${postsBefore} POSTs (422 PRODUCT_UNKNOWN named in status), cancelled in one step: nothing queued, nothing sent after`,
      orders: 2200,
      lost: 2200 - ((await batchOf(r, good.batchId)).delivered + ended.dead),
      duplicates: storedTwice(r),
      held: 0,
    });
  }, 300_000);

  it('a batch whose first 20 of 300 orders are refused: held, its probe accepted, resumed on its own; 280 delivered, 20 dead-lettered', async () => {
    rig = await deliveryRig('canary-first20', { retainOrders: true }, { BULKORDER_CANARY_PROBE_MS: '2000' });
    const rows = [HEADER];
    for (let i = 1; i <= 300; i++) rows.push(orderRow(`F20-${i}`, i <= 20 ? UNKNOWN_PRODUCT : 5001, 1, 1001 + (i % 3)));
    const file = await rig.writeFile('first20.csv', rows.join('\n') + '\n');
    const imported = await rig.importFile(file);
    await rig.startWorker();
    const r = rig;
    const ended = await until(
      'every order ended',
      () => batchOf(r, imported.batchId),
      (b) => b.delivered + b.dead + b.held >= 300,
    );
    expect(ended.delivered).toBe(280);
    expect(ended.dead).toBe(20);
    expect(ended.held).toBe(0);
    const circuit = await readBatchCircuit(r.services.redis, r.services.keys, imported.batchId);
    // No person: the batch flows again by its probe (or its canary passed), never by an action.
    expect(circuit.state).toBe('flowing');
    expect(circuit.action).toBeUndefined();
    expect(await listHeldBatches(r.services.redis, r.services.keys)).toEqual([]);
    expect(storedTwice(r)).toBe(0);
    recordReliability({
      fault: 'a batch of 300 whose first 20 orders name an unknown product',
      behaviour: `its canary held it; a probe of an untried order was accepted and it resumed on its own (no person); 280 delivered, the 20 refused again and dead-lettered with the API's answer`,
      orders: 300,
      lost: 300 - ended.delivered - ended.dead - ended.held,
      duplicates: storedTwice(r),
      held: ended.held,
    });
  }, 300_000);

  it('every request refused with a code never seen (400) for 20 s, then accepted: held, then resumed by its probe; every order delivered once, --wait exit 0', async () => {
    // The probe comes after the outage (25 s); the default 60 s heals the same way, later.
    rig = await deliveryRig('canary-heals', { retainOrders: true }, { BULKORDER_CANARY_PROBE_MS: '25000' });
    const refusal = {
      status: 400,
      path: 'orders' as const,
      body: { code: 'GATEWAY_MISCONFIGURED', message: 'upstream route missing' },
    };
    rig.simulator.setFaults({ script: Array.from({ length: 500 }, () => refusal) });
    const healed = setTimeout(() => rig?.simulator.setFaults({ script: [] }), 20_000);
    try {
      await rig.startWorker();
      const file = await rig.writeFile(
        'heals.csv',
        ordersCsv('HEAL', 50, (i) => 1001 + (i % 3)),
      );
      const run = await runCli(['import', file, '--wait', '--json'], rig.env);
      expect(run.code).toBe(0);
      // It was held and resumed on its own (the events log the notifications read), with no person's action.
      const [batch] = await rig.services.batches.list(1);
      const events = await readBatchCircuitEvents(rig.services.redis, rig.services.keys, 0);
      expect(events.filter((e) => e.batchId === batch!.id).map((e) => e.type)).toEqual(['held', 'resumed']);
      expect(events[0]!.circuit.code).toBe('GATEWAY_MISCONFIGURED');
      const stored = rig.simulator.orders().length;
      expect(stored).toBe(50);
      expect(storedTwice(rig)).toBe(0);
      // The outage cost the canary, not the batch: at most the canary and what was in flight were refused.
      expect(rig.simulator.counters().errors.GATEWAY_MISCONFIGURED ?? 0).toBeLessThanOrEqual(60);
      recordReliability({
        fault: 'every request refused 400 with a code never seen, for 20 s, then accepted',
        behaviour:
          'the batch held itself after its canary (the API breaker stayed closed: one batch); its probe after the outage was accepted, it resumed on its own and sent the refused orders again; --wait exit 0',
        orders: 50,
        lost: 50 - stored,
        duplicates: storedTwice(rig),
        held: 0,
      });
    } finally {
      clearTimeout(healed);
    }
  }, 300_000);

  it('a held batch is an open item (`open --json`, status) until a person releases or cancels it; a cancel leaves no open dead letters', async () => {
    // No probe within the test: only a person's action moves the held batches.
    rig = await deliveryRig('canary-open', { retainOrders: true }, { BULKORDER_CANARY_PROBE_MS: '600000' });
    await rig.startWorker();
    const r = rig;
    const openNow = async () =>
      JSON.parse((await runCli(['open', '--json'], r.env)).stdout) as {
        total: number;
        counts: Record<string, number>;
        groups: { kind: string; cause: string; action: string; items: { id: string; batchId?: string }[] }[];
      };
    const heldState = (batchId: string) =>
      until(
        `batch ${batchId} held`,
        () => readBatchCircuit(r.services.redis, r.services.keys, batchId),
        (c) => c.state === 'held',
      );

    const wrong = await rig.importFile(await rig.writeFile('wrong.csv', badCsv('WRONG', 40)));
    await heldState(wrong.batchId);
    // A refusal that is the gateway's, fixed before the person releases the batch.
    rig.simulator.setFaults({
      script: Array.from({ length: 40 }, () => ({
        status: 400,
        path: 'orders' as const,
        body: { code: 'ROUTE_MISSING', message: 'upstream route missing' },
      })),
    });
    const stalled = await rig.importFile(await rig.writeFile('stalled.csv', ordersCsv('STALL', 40)));
    await heldState(stalled.batchId);
    rig.simulator.setFaults({ script: [] });

    const listed = await openNow();
    expect(listed.counts).toMatchObject({ batch: 2, dead: 0, held: 0 });
    const batchGroups = listed.groups.filter((g) => g.kind === 'batch');
    expect(batchGroups.flatMap((g) => g.items.map((i) => i.id)).sort()).toEqual(
      [`batch:${wrong.batchId}`, `batch:${stalled.batchId}`].sort(),
    );
    const wrongGroup = batchGroups.find((g) => g.items[0]!.batchId === wrong.batchId)!;
    expect(wrongGroup.cause).toContain('PRODUCT_UNKNOWN');
    expect(wrongGroup.action).toContain(`bulkorder batch release ${wrong.batchId}`);
    expect(wrongGroup.action).toContain(`bulkorder batch cancel ${wrong.batchId}`);
    expect(batchGroups.find((g) => g.items[0]!.batchId === stalled.batchId)!.cause).toContain('ROUTE_MISSING');
    expect((await runCli(['status'], r.env)).stdout).toMatch(/Needs a person: 2 open \(2 held batches\)/);

    // Cancelled: the batch leaves the list, and its orders ended unsent are the person's decision, not open dead letters.
    expect((await runCli(['batch', 'cancel', wrong.batchId, '--why', 'wrong catalogue'], r.env)).code).toBe(0);
    const cancelled = await until(
      'the cancelled batch ended',
      () => batchOf(r, wrong.batchId),
      (b) => b.delivered + b.dead + b.held >= 40,
    );
    expect(cancelled).toMatchObject({ delivered: 0, dead: 40 });
    const afterCancel = await openNow();
    expect(afterCancel.total).toBe(1);
    expect(afterCancel.counts).toMatchObject({ batch: 1, dead: 0 });
    expect(afterCancel.groups[0]!.items[0]!.id).toBe(`batch:${stalled.batchId}`);

    // Released after the gateway was fixed: every order delivered, nothing open.
    expect((await runCli(['batch', 'release', stalled.batchId, '--why', 'gateway fixed'], r.env)).code).toBe(0);
    const released = await until(
      'the released batch delivered',
      () => batchOf(r, stalled.batchId),
      (b) => b.delivered + b.dead + b.held >= 40,
    );
    expect(released).toMatchObject({ delivered: 40, dead: 0, held: 0 });
    const afterRelease = await runCli(['open', '--json'], r.env);
    expect(afterRelease.code).toBe(0);
    expect(JSON.parse(afterRelease.stdout)).toMatchObject({ total: 0, counts: { batch: 0, dead: 0 } });
    expect(storedTwice(r)).toBe(0);
    expect(r.simulator.orders()).toHaveLength(40);
  }, 300_000);

  it("a 5xx storm is the API's: the API breaker opens, whatever the batch", async () => {
    rig = await deliveryRig('canary-5xx', {}, { BULKORDER_BREAKER_OPEN_MS: '600000' });
    rig.simulator.setFaults({ serverErrorRate: 1 });
    const imported = await rig.importFile(
      await rig.writeFile(
        'storm.csv',
        ordersCsv('STORM', 60, (i) => 1001 + (i % 3)),
      ),
    );
    await rig.startWorker();
    const r = rig;
    await until(
      'the API breaker open',
      () => r.services.redis.hget(r.services.keys.breaker, 'state'),
      (s) => s === 'open',
    );
    const circuit = await readBatchCircuit(r.services.redis, r.services.keys, imported.batchId);
    expect(circuit.state).not.toBe('held');
    const batch = await batchOf(r, imported.batchId);
    expect(batch.dead).toBe(0);
    recordReliability({
      fault: 'a 5xx storm while one batch is in its canary',
      behaviour:
        "the API breaker opened (a 5xx is the API's, never one batch's); the batch was not held, nothing dead-lettered",
      orders: 60,
      lost: 0,
      duplicates: 0,
      held: batch.held,
    });
  }, 300_000);
});
