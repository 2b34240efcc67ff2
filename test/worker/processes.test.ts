import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { importFile } from '../../src/importer/importFile.js';
import { DELIVER_ORDER } from '../../jobs/deliverOrder.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';

let rig: DeliveryRig | undefined;
const processes: CliProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

async function importOrders(r: DeliveryRig, name: string, count: number) {
  const rows = [HEADER];
  for (let i = 1; i <= count; i++) rows.push(orderRow(`${name}-${i}`));
  const file = await r.writeFile(`${name}.csv`, rows.join('\n') + '\n');
  return importFile(file, {}, {
    queue: r.services.queue,
    ledger: r.services.ledger,
    batches: r.services.batches,
    env: 'acceptance',
    logger: r.logger,
    jobOptions: r.services.jobOptions,
    jobName: DELIVER_ORDER,
  });
}

describe('worker processes (the real CLI, real Redis, the simulator)', () => {
  it('two worker processes share one token: one token request per token lifetime', async () => {
    rig = await deliveryRig('twoproc', { tokenLifetimeSeconds: 1, faults: { latencyMs: 25 } });
    const workerEnv = { ...rig.env, BULKORDER_CONCURRENCY: '4', LOG_LEVEL: 'warn' };
    processes.push(startCli(['worker'], workerEnv), startCli(['worker'], workerEnv));
    const started = Date.now();
    const imported = await importOrders(rig, 'TOKEN', 240);
    const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, { pollMs: 100, timeoutMs: 45_000, out: quiet });
    const elapsedSeconds = (Date.now() - started) / 1000;
    expect(settled).toBe(true);
    expect(batch.delivered).toBe(240);

    const counters = rig.simulator.counters();
    expect(counters.duplicateOrdersAccepted).toBe(0);
    // Both processes delivered (the work was shared) ...
    const logs = processes.map((p) => p.output());
    expect(logs.every((log) => !/"level":50/.test(log))).toBe(true);
    // ... and one token served each lifetime: without the shared cache each process fetches its own.
    expect(counters.tokenRequests.business).toBeGreaterThanOrEqual(1);
    expect(counters.tokenRequests.business).toBeLessThanOrEqual(Math.ceil(elapsedSeconds / 1) + 1);
  }, 60_000);

  it('a worker killed with SIGKILL mid-batch loses nothing and posts nothing blindly', async () => {
    rig = await deliveryRig('sigkill', { faults: { latencyMs: 300 } }, { BULKORDER_HTTP_DEADLINE_MS: '2000', BULKORDER_STALLED_INTERVAL_MS: '1000' });
    const workerEnv = { ...rig.env, BULKORDER_CONCURRENCY: '5', LOG_LEVEL: 'warn' };
    const first = startCli(['worker'], workerEnv);
    processes.push(first);
    const imported = await importOrders(rig, 'KILL', 30);
    await waitFor(async () => ((await rig!.services.batches.get(imported.batchId))?.delivered ?? 0) >= 5, 'five deliveries');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    processes.push(startCli(['worker'], workerEnv));
    const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, { pollMs: 100, timeoutMs: 40_000, out: quiet });
    expect(settled).toBe(true);
    expect(batch.dead).toBe(0);
    expect(batch.delivered + batch.held).toBe(30);

    const counters = rig.simulator.counters();
    expect(counters.duplicateOrdersAccepted).toBe(0);
    // Every delivered order reached the API once; a held one may or may not have (it was in flight).
    expect(counters.ordersAccepted).toBeGreaterThanOrEqual(batch.delivered);
    expect(counters.ordersAccepted).toBeLessThanOrEqual(batch.delivered + batch.held);
  }, 60_000);
});
