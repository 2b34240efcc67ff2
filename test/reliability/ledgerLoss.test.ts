/**
 * Issue 26 item 5, the importer's side: a Redis that forgets (restarted without persistence, or
 * flushed) must cause no duplicate sent with exit 0. The import journal beside the input names the
 * namespace epoch its ledger lived in; a re-run on a Redis that forgot is refused (LEDGER_LOST,
 * exit 5), and with --trust-results the earlier results file is the ledger.
 */
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { samplesDir } from '../../src/paths.js';
import { CAFETARIAPLAN, deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';

let rig: DeliveryRig | undefined;
let other: DeliveryRig | undefined;
let redisServer: PrivateRedis | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close().catch(() => undefined);
  await other?.close().catch(() => undefined);
  other = undefined;
  await redisServer?.stop();
  rig = undefined;
  redisServer = undefined;
  // A bound for a hang, not a speed: workers closing on a Redis that forgot wait out their jobs' grace on a busy machine.
}, 120_000);

/** `bulkorder import <file> --wait --json [extra]`, in-process: its exit code and its one JSON object. */
async function importJson(
  r: DeliveryRig,
  file: string,
  extra: string[] = [],
): Promise<{ exit: number; json: Record<string, any>; output: string }> {
  const cli = await runCli(['import', file, '--wait', '--timeout', '200', '--json', ...extra], {
    ...r.env,
    LOG_LEVEL: 'warn',
  });
  return { exit: cli.code, json: JSON.parse(cli.stdout) as Record<string, any>, output: cli.output };
}

/** A rig on a private redis-server without persistence (appendonly no, no snapshots): a restart forgets everything. */
async function volatileRig(name: string): Promise<DeliveryRig> {
  redisServer = await startPrivateRedis();
  return deliveryRig(name, {}, { REDIS_URL: redisServer.url, BULKORDER_STALLED_INTERVAL_MS: '1000' });
}

describe('a Redis that forgets: no duplicate sent with exit 0 (real redis-server, real CLI, simulator)', () => {
  it('FLUSHALL after a complete import: the re-run is refused (LEDGER_LOST, exit 5, nothing sent); --trust-results sends nothing again; later runs read the results file as the ledger', async () => {
    rig = await volatileRig('flushall');
    const orders = 300;
    const file = await rig.writeFile('night.csv', ordersCsv('FL', orders));
    await rig.startWorker({ concurrency: 20 });
    const first = await importJson(rig, file);
    expect(first.exit, first.output).toBe(0);
    expect(rig.simulator.counters().ordersAccepted).toBe(orders);
    expect((await readdir(rig.dir)).sort()).toEqual(['night.csv', 'night.csv.journal', 'night.csv.results.csv']);
    const journal = JSON.parse(await readFile(`${file}.journal`, 'utf8')) as { imports: Record<string, unknown>[] };
    expect(journal.imports).toEqual([
      expect.objectContaining({ batchId: first.json.batchId, state: 'complete', target: rig.prefix }),
    ]);

    const flush = new Redis(redisServer!.url);
    await flush.flushall();
    flush.disconnect();

    const refused = await importJson(rig, file);
    expect(refused.exit, refused.output).toBe(5);
    expect(refused.json.refused).toMatchObject({
      code: 'LEDGER_LOST',
      details: { batchId: first.json.batchId, markerWasMissing: true, resultsDelivered: orders },
    });
    expect(refused.output).toMatch(/--trust-results .*--force/s);
    expect(rig.simulator.counters().ordersAccepted).toBe(orders); // nothing sent

    const trusted = await importJson(rig, file, ['--trust-results']);
    expect(trusted.exit, trusted.output).toBe(0);
    expect(trusted.json.counts).toMatchObject({ skippedResults: orders, enqueued: 0 });
    expect(trusted.json.ledgerLost).toMatchObject({ batchId: first.json.batchId, policy: 'trust-results' });
    const results = await readFile(`${file}.results.csv`, 'utf8');
    expect(results.match(/already delivered \(results file\)/g)).toHaveLength(orders);
    expect(results).toContain(first.json.batchId); // the batch that delivered them, carried over

    // The journal now names the new epoch: a plain re-run goes on, the results file still its ledger.
    const again = await importJson(rig, file);
    expect(again.exit, again.output).toBe(0);
    expect(again.json.counts).toMatchObject({ skippedResults: orders, enqueued: 0 });
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(orders);
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'Redis flushed (FLUSHALL) after a complete import of 300 orders, then the same import again',
      behaviour:
        're-run refused: LEDGER_LOST (exit 5, journal beside the input named the lost batch), nothing sent; --trust-results skipped all 300 as delivered by the results file, exit 0',
      orders,
      lost: orders - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 300_000);

  it('redis-server without persistence restarted mid-run: the importer stops with exit 5, the re-run is refused (LEDGER_LOST), no order reaches the API twice', async () => {
    rig = await volatileRig('restart');
    const orders = 1500;
    const file = await rig.writeFile('night.csv', ordersCsv('RS', orders));
    await rig.startWorker({ concurrency: 4 });
    const importer = startCli(['import', file, '--wait', '--json'], { ...rig.env, LOG_LEVEL: 'warn' });
    await waitFor(() => rig!.simulator.counters().ordersAccepted >= 200, '200 orders delivered', 120_000);
    await redisServer!.restart(); // SIGKILL and start again: no AOF, no snapshot, an empty Redis
    const firstExit = await importer.exited;
    expect(firstExit, importer.output()).toBe(5);
    const ending = JSON.parse(importer.stdout()) as Record<string, any>;
    expect(['LEDGER_LOST', 'REDIS_UNAVAILABLE']).toContain(ending.refused.code);
    const deliveredBefore = rig.simulator.counters().ordersAccepted;

    const rerun = await importJson(rig, file);
    expect(rerun.exit, rerun.output).toBe(5);
    expect(rerun.json.refused).toMatchObject({ code: 'LEDGER_LOST', details: { resultsFile: null } });
    expect(rerun.output).toContain('there is no results file');
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(deliveredBefore); // the refusal sent nothing
    expect(counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: `redis-server without persistence restarted mid-run (${deliveredBefore} of ${orders} orders delivered), then the same import again`,
      behaviour: `the importer stopped (exit 5, ${ending.refused.code}); the re-run was refused with LEDGER_LOST (exit 5: no results file to trust, --force to send everything) and sent nothing: the ${orders - counters.ordersAccepted} not delivered wait, named, for an operator who checked the service`,
      orders,
      // Not lost silently: every run since the loss exits 5 naming the batch; they go once a person chooses --force.
      lost: 0,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 300_000);

  it("one file, two targets: the results file of one target's run is no ledger for the other (journal entries per target)", async () => {
    rig = await volatileRig('target-a');
    other = await deliveryRig('target-b', {}, { REDIS_URL: redisServer!.url }); // another API, the same Redis
    const orders = 100;
    const file = await rig.writeFile('night.csv', ordersCsv('TG', orders));
    await rig.startWorker({ concurrency: 10 });
    await other.startWorker({ concurrency: 10 });
    const a = await importJson(rig, file);
    expect(a.exit, a.output).toBe(0);
    const b = await importJson(other, file);
    expect(b.exit, b.output).toBe(0);
    expect(b.json.counts).toMatchObject({ skippedResults: 0, enqueued: orders });
    expect(b.json.resultsLedger).toBeNull();
    expect(b.output).toMatch(/not named by this target's entry .*not read as a ledger/);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: orders, duplicateOrdersAccepted: 0 });
    expect(other.simulator.counters()).toMatchObject({ ordersAccepted: orders, duplicateOrdersAccepted: 0 });
    const journal = JSON.parse(await readFile(`${file}.journal`, 'utf8')) as { imports: { target: string }[] };
    expect(journal.imports.map((e) => e.target).sort()).toEqual([rig.prefix, other.prefix].sort());
    // Target B's run rewrote the results file: target A, after a FLUSHALL, has no results file to trust.
    const flush = new Redis(redisServer!.url);
    await flush.flushall();
    flush.disconnect();
    const refused = await importJson(rig, file);
    expect(refused.exit, refused.output).toBe(5);
    expect(refused.json.refused).toMatchObject({ code: 'LEDGER_LOST', details: { resultsFile: null } });
    expect(rig.simulator.counters().ordersAccepted).toBe(orders);
    recordReliability({
      fault: 'one input imported into two targets (two APIs, one Redis, one folder), then Redis flushed',
      behaviour:
        "each API got every order once (the first target's results file was no ledger for the second: the journal names the results per target); after the flush the first target's re-run was refused (LEDGER_LOST, exit 5)",
      orders: 2 * orders,
      lost: 2 * orders - rig.simulator.counters().ordersAccepted - other.simulator.counters().ordersAccepted,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted + other.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 300_000);

  it('employee accounts the same way: FLUSHALL, LEDGER_LOST, and --trust-results keeps every customerId of the results file', async () => {
    redisServer = await startPrivateRedis();
    rig = await deliveryRig('accounts', {}, { ...CAFETARIAPLAN, REDIS_URL: redisServer.url });
    const env = { ...rig.env, LOG_LEVEL: 'warn' };
    startCli(['worker', '--concurrency', '3'], {
      ...env,
      BULKORDER_BUSINESS_CLIENT_ID: '',
      BULKORDER_BUSINESS_CLIENT_SECRET: '',
    });
    const employees = join(rig.dir, 'employees.csv');
    await copyFile(join(samplesDir, 'employees.csv'), employees);
    const accountsImport = async (extra: string[] = []) => {
      const cli = await runCli(
        ['accounts', 'import', employees, '--wait', '--timeout', '120', '--json', ...extra],
        env,
      );
      return { exit: cli.code, json: JSON.parse(cli.stdout) as Record<string, any>, output: cli.output };
    };
    const readResults = async () =>
      parse<Record<string, string>>(await readFile(`${employees}.results.csv`, 'utf8'), { columns: true, bom: true });
    const first = await accountsImport();
    expect(first.exit, first.output).toBe(0);
    const registered = await readResults();
    expect(registered).toHaveLength(5);

    const flush = new Redis(redisServer.url);
    await flush.flushall();
    flush.disconnect();
    const refused = await accountsImport();
    expect(refused.exit, refused.output).toBe(5);
    expect(refused.json.refused).toMatchObject({ code: 'LEDGER_LOST', details: { resultsDelivered: 5 } });
    expect(refused.output).toContain('bulkorder accounts import');
    const trusted = await accountsImport(['--trust-results']);
    expect(trusted.exit, trusted.output).toBe(0);
    expect(trusted.json.counts).toMatchObject({ skippedResults: 5, enqueued: 0 });
    const after = await readResults();
    expect(after.map((r) => [r.accountKey, r.outcome, r.customerId, r.message])).toEqual(
      registered.map((r) => [r.accountKey, 'already-delivered', r.customerId, 'already delivered (results file)']),
    );
    const created = rig.simulator.counters().accountsCreated;
    expect(created).toBe(5);
    recordReliability({
      fault: 'Redis flushed (FLUSHALL) after 5 employee accounts were registered, then the same accounts import again',
      behaviour:
        're-run refused: LEDGER_LOST (exit 5); --trust-results registered none again and kept every customerId of the results file, exit 0',
      orders: 5,
      lost: 5 - created,
      duplicates: 0, // accountsCreated is exactly 5: nothing registered twice
      held: 0,
    });
  }, 300_000);
});
