import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAccountDelivery } from '../../src/assembly/startWorkers.js';
import { redisPrefix } from '../../src/config.js';
import { runCli } from '../helpers/runCli.js';
import {
  CAFETARIAPLAN,
  COMPANY,
  deliveryRig,
  HEADER,
  orderRow,
  withWorkerOnceRead,
  type DeliveryRig,
} from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await rig?.close();
  rig = undefined;
});

interface JsonRun {
  code: number | string;
  /** stdout parsed whole: it must be one JSON document and nothing else. */
  json: Record<string, any>;
}

async function json(r: DeliveryRig, args: string[], env: Record<string, string> = {}): Promise<JsonRun> {
  const p = await runCli([...args, '--json'], { ...r.env, ...env });
  const code = p.code;
  let parsed: Record<string, any>;
  try {
    parsed = JSON.parse(p.stdout) as Record<string, any>;
  } catch {
    throw new Error(`${args.join(' ')} --json: stdout is not one JSON document:\n${p.output}`);
  }
  return { code, json: parsed };
}

/** Every order (or account) sent once: the first gets no answer (held), the second is refused (dead), the rest succeed. */
const HELD_THEN_REFUSED = (path: 'orders' | 'accounts') => ({
  faults: {
    script: [
      { path, status: 200, noAnswer: true, store: false },
      ...(path === 'accounts'
        ? [{ path, status: 422, body: { code: 'PLAN_NOT_CONFIGURED', message: 'no budget plan yet' } }]
        : []),
    ],
  },
});

describe('--json on the commands that change something (the CLI run in-process, stdout parsed)', () => {
  it('import, dead-letters retry and review release print one JSON object with the real counts and the exit code', async () => {
    rig = await deliveryRig('json-orders', HELD_THEN_REFUSED('orders'), { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300' });
    // J-1: no answer (held); J-2: a product not in the catalogue (dead, 422); J-3 delivered; one row rejected.
    const file = await rig.writeFile(
      'orders.csv',
      [
        HEADER,
        orderRow('J-1'),
        orderRow('J-2', 5999),
        orderRow('J-3'),
        orderRow('J-4').replace('anna.j-4@example.nl', 'not-an-email'),
      ].join('\n') + '\n',
    );
    // Its worker starts once the file is read (withWorkerOnceRead); the later commands' worker after it.
    const imported = await withWorkerOnceRead(rig, file, json(rig, ['import', file, '--wait', '--max-wait', '30']), {
      concurrency: 1,
    });
    await rig.startWorker({ concurrency: 1 });
    expect(imported.code).toBe(4);
    expect(imported.json).toMatchObject({
      file,
      kind: 'orders',
      counts: { rows: 4, orders: 4, valid: 3, rejected: 1, enqueued: 3, skippedDelivered: 0 },
      waited: true,
      settled: true,
      delivery: { delivered: 1, dead: 1, held: 1 },
      results: { orders: 4, byOutcome: { delivered: 1, 'dead-lettered': 1, 'held-for-review': 1, rejected: 1 } },
      exitCode: 4,
      exitMeaning: 'some rows or orders need attention',
    });
    expect(imported.json.errorKinds).toEqual([expect.objectContaining({ code: 'EMAIL_INVALID', count: 1 })]);
    expect(existsSync(imported.json.rejectsFile)).toBe(true);
    expect(existsSync(imported.json.resultsFile)).toBe(true);
    expect(await rig.services.batches.get(imported.json.batchId)).toMatchObject({ delivered: 1, dead: 1, held: 1 });

    // Without --wait: queued, not followed; no results file.
    const more = await rig.writeFile('more.csv', [HEADER, orderRow('J-5'), orderRow('J-3')].join('\n') + '\n');
    const queued = await json(rig, ['import', more]);
    expect(queued.code).toBe(0);
    expect(queued.json).toMatchObject({
      counts: { rows: 2, valid: 2, enqueued: 1, skippedDelivered: 1 },
      waited: false,
      resultsFile: null,
      rejectsFile: null,
      exitCode: 0,
    });

    const retried = await json(rig, ['dead-letters', 'retry', '--all', '--wait', '--timeout', '20']);
    expect(retried.code).toBe(4); // the product is still unknown: dead again
    expect(retried.json).toMatchObject({ kind: 'orders', action: 'dead-letters retry', matched: 1, exitCode: 4 });
    expect(retried.json.batches).toEqual([
      expect.objectContaining({
        counts: expect.objectContaining({ orders: 1, enqueued: 1 }),
        settled: true,
        delivered: 0,
        dead: 1,
      }),
    ]);

    const released = await json(rig, ['review', 'release', '--all', '--wait', '--timeout', '20', '--by', 'bert']);
    expect(released.code).toBe(0);
    expect(released.json).toMatchObject({
      kind: 'orders',
      action: 'review release',
      releasedBy: 'bert',
      matched: 1,
      exitCode: 0,
      exitMeaning: 'ok',
    });
    expect(released.json.batches).toEqual([
      expect.objectContaining({
        counts: expect.objectContaining({ enqueued: 1 }),
        settled: true,
        delivered: 1,
        dead: 0,
        held: 0,
      }),
    ]);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 3, duplicateOrdersAccepted: 0 });

    // A file refused as a whole: the refusal is the JSON object, and the exit code stays 3.
    const empty = await rig.writeFile('empty.csv', HEADER + '\n');
    const refused = await json(rig, ['import', empty]);
    expect(refused.code).toBe(3);
    expect(refused.json).toMatchObject({
      file: empty,
      refused: { code: 'FILE_EMPTY', exitCode: 3 },
      exitCode: 3,
      exitMeaning: 'file refused as a whole',
    });
    const unselected = await json(rig, ['review', 'release']);
    expect(unselected.code).toBe(2);
    expect(unselected.json).toMatchObject({ refused: { code: 'SELECTION_MISSING' }, exitCode: 2 });
    const badSchedule = await json(rig, [
      'schedule',
      'set',
      'nightly',
      '--cron',
      '0 2 * * *',
      '--source',
      join(rig.dir, 'missing'),
    ]);
    expect(badSchedule.code).toBe(2);
    expect(badSchedule.json).toMatchObject({
      action: 'set',
      name: 'nightly',
      refused: { code: 'SOURCE_NOT_FOUND' },
      exitCode: 2,
    });
  }, 180_000);

  it('accounts import, accounts dead-letters retry and accounts review release do the same for employee accounts', async () => {
    rig = await deliveryRig('json-accounts', HELD_THEN_REFUSED('accounts'), {
      ...CAFETARIAPLAN,
      BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300',
    });
    const file = join(rig.dir, 'staff.csv');
    await writeFile(
      file,
      'email,firstName,lastName,isoLanguageCode,companyId\n' +
        [
          ['anna.devries', 'Anna'],
          ['bram.jansen', 'Bram'],
          ['chloe.martin', 'Chloe'],
        ]
          .map(([mail, name]) => `${mail}@example.nl,${name},Jansen,nl,${COMPANY}`)
          .join('\n') +
        `\nnot-an-email,Dirk,Peeters,nl,${COMPANY}\n`,
    );
    // The account worker in this process (what `worker --concurrency 1` starts for accounts), not a node and tsx start.
    const worker = await startAccountDelivery(rig.config, rig.logger, {
      prefix: redisPrefix(rig.config, 'cafetariaplan'),
      delivery: { ...rig.config.delivery, concurrency: 1 },
    });
    stops.push(() => worker.close());

    const imported = await json(rig, ['accounts', 'import', file, '--wait', '--max-wait', '120']);
    expect(imported.code).toBe(4);
    expect(imported.json).toMatchObject({
      kind: 'accounts',
      counts: { rows: 4, orders: 4, valid: 3, rejected: 1, enqueued: 3 },
      delivery: { delivered: 1, dead: 1, held: 1 },
      exitCode: 4,
    });
    expect(existsSync(imported.json.resultsFile)).toBe(true);

    const retried = await json(rig, ['accounts', 'dead-letters', 'retry', '--all', '--wait', '--timeout', '120']);
    expect(retried.code).toBe(0);
    expect(retried.json).toMatchObject({ kind: 'accounts', matched: 1, exitCode: 0 });
    expect(retried.json.batches).toEqual([
      expect.objectContaining({ counts: expect.objectContaining({ enqueued: 1 }), delivered: 1 }),
    ]);

    const released = await json(rig, ['accounts', 'review', 'release', '--all', '--wait', '--timeout', '120']);
    expect(released.code).toBe(0);
    expect(released.json).toMatchObject({ kind: 'accounts', action: 'review release', matched: 1, exitCode: 0 });
    expect(released.json.batches).toEqual([
      expect.objectContaining({ counts: expect.objectContaining({ enqueued: 1 }), delivered: 1 }),
    ]);
    expect(rig.simulator.counters().accountsCreated).toBe(3);
  }, 180_000);
});
