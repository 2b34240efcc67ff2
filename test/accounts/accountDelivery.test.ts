import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { writeResults } from '../../src/batches/writeResults.js';
import { ACCOUNTS } from '../../src/kinds/accounts.js';
import { openLoginPortal, type LoginPortal } from '../../src/accounts/openLoginPortal.js';
import type { AccountPayload } from '../../src/ingest/accountColumns.js';
import { importFile } from '../../src/importer/importFile.js';
import type { ParkedRecord } from '../../src/deliveryJob.js';
import { redisPrefix } from '../../src/config.js';
import { openServices, type Services } from '../../src/services.js';
import { samplesDir } from '../../src/paths.js';
import { startAccountDelivery } from '../../src/assembly/startWorkers.js';
import type { DeliveryWorker } from '../../src/assembly/deliveryWorker.js';
import { COMPANY, CAFETARIAPLAN, deliveryRig, type DeliveryRig } from '../helpers/deliveryRig.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let rig: DeliveryRig | undefined;
let services: Services<AccountPayload> | undefined;
let worker: DeliveryWorker<AccountPayload> | undefined;
let portal: LoginPortal | undefined;
afterEach(async () => {
  await portal?.close();
  await worker?.close();
  await services?.close();
  await rig?.close();
  [rig, services, worker, portal] = [undefined, undefined, undefined, undefined];
});

function accountsImport(r: DeliveryRig, s: Services<AccountPayload>, file: string) {
  return importFile(file, {}, s.pipeline(r.logger));
}

/** Registers an employee straight on the simulator, as another system would have. */
async function registerElsewhere(r: DeliveryRig, account: AccountPayload): Promise<void> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: 'sim-cafetariaplan',
    client_secret: 'sim-cafetariaplan-secret',
  });
  const token = (await (await fetch(`${r.simulator.url}/oauth2/token`, { method: 'POST', body: form })).json()) as {
    access_token: string;
  };
  const created = await fetch(`${r.simulator.url}/cafetariaplan-api/accounts`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token.access_token}`,
      'content-type': 'application/json',
      'user-agent': 'Test-BulkorderTests',
    },
    body: JSON.stringify(account),
  });
  expect(created.status).toBe(201);
}

describe('employee accounts end to end (real Redis, simulator, BullMQ workers)', () => {
  it('registers every employee once, keeps each customerId, reports an existing account clearly, and never mixes with orders', async () => {
    rig = await deliveryRig('accounts', {}, CAFETARIAPLAN);
    await registerElsewhere(rig, {
      email: 'eva.schmidt@example.de',
      firstName: 'Eva',
      lastName: 'Schmidt',
      isoLanguageCode: 'de',
      companyId: '9a7c2d4e-1b3f-4c5d-8e6f-7a8b9c0d1e2f',
    });
    rig.simulator.setFaults({
      script: [
        {
          path: 'accounts',
          status: 503,
          headers: { 'retry-after': '0' },
          body: { code: 'MAINTENANCE', message: 'back soon' },
        },
      ],
    });
    const file = join(rig.dir, 'employees.csv');
    await copyFile(join(samplesDir, 'employees.csv'), file);
    services = await openServices(rig.config, ACCOUNTS);
    worker = await startAccountDelivery(rig.config, rig.logger, {
      prefix: redisPrefix(rig.config, 'cafetariaplan'),
      delivery: { ...rig.config.delivery, concurrency: 2 },
    });

    const imported = await accountsImport(rig, services, file);
    expect(imported.counts).toMatchObject({ orders: 5, valid: 5, rejected: 0, enqueued: 5 });
    const { batch, settled } = await followBatch(services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 20_000,
      out: devNull(),
    });
    expect(settled).toBe(true);
    expect(batch).toMatchObject({ delivered: 4, dead: 1, held: 0 });
    const counters = rig.simulator.counters();
    expect(counters.accountsCreated).toBe(5); // four here, one "elsewhere"
    expect(counters.statuses['503']).toBe(1);
    expect(counters.statuses['409']).toBe(1);

    // The results file names every employee with the customerId the service returned.
    const resultsPath = join(rig.dir, 'employees.results.csv');
    const counts = await writeResults({
      file,
      ingest: {},
      batchId: imported.batchId,
      ledger: services.ledger,
      outPath: resultsPath,
      kind: ACCOUNTS,
    });
    expect(counts.byOutcome).toEqual({ delivered: 4, 'account-exists': 1 });
    const rows = parse<Record<string, string>>(await readFile(resultsPath, 'utf8'), { columns: true, bom: true });
    for (const row of rows.filter((r) => r.outcome === 'delivered')) expect(row.customerId).toMatch(UUID);
    expect(rows.find((r) => r.email === 'eva.schmidt@example.de')).toMatchObject({
      outcome: 'account-exists',
      httpStatus: '409',
      errorCode: 'ACCOUNT_EXISTS',
      customerId: '',
    });

    // The 409 is an account dead letter with a plain reason, kept apart from order dead letters.
    const redis = services.redis;
    const deadKeys = await redis.zrange(services.keys.parkedIndex('dead'), '0', '-1');
    expect(deadKeys).toHaveLength(1);
    const dead = JSON.parse(
      (await redis.get(services.keys.parked('dead', deadKeys[0]!)))!,
    ) as ParkedRecord<AccountPayload>;
    expect(dead).toMatchObject({
      httpStatus: 409,
      code: 'ACCOUNT_EXISTS',
      attempts: 1,
      payload: { email: 'eva.schmidt@example.de' },
    });
    expect(dead.reason).toMatch(/already exists on the service.*not registered again/);
    expect(await redis.zcard(rig.services.keys.parkedIndex('dead'))).toBe(0);

    // A second import registers nobody twice.
    const again = await accountsImport(rig, services, file);
    expect(again.counts).toMatchObject({ skippedDelivered: 4 });

    // The mapping (environment, companyId, email) -> customerId serves login, e-mail case ignored.
    portal = await openLoginPortal(rig.config, rig.logger);
    const anna = rows.find((r) => r.email === 'anna.devries@example.nl')!;
    const url = await portal.loginUrlFor({ email: 'Anna.deVries@example.nl', companyId: COMPANY.toUpperCase() });
    expect(url.startsWith(`${rig.simulator.url}/sso/`)).toBe(true);
    expect(await portal.loginUrlFor({ customerId: anna.customerId! })).not.toBe(url); // one-time: a new URL each call
    // A passing fault on the login call is tried again (asking again only makes a new one-time URL).
    const busyBefore = rig.simulator.counters().errors.BUSY ?? 0;
    rig.simulator.setFaults({
      script: [
        { path: 'login', status: 503, headers: { 'retry-after': '0' }, body: { code: 'BUSY', message: 'busy' } },
      ],
    });
    expect(await portal.loginUrlFor({ customerId: anna.customerId! })).toMatch(/\/sso\//);
    expect((rig.simulator.counters().errors.BUSY ?? 0) - busyBefore).toBe(1);
    await expect(
      portal.loginUrlFor({ email: 'eva.schmidt@example.de', companyId: '9a7c2d4e-1b3f-4c5d-8e6f-7a8b9c0d1e2f' }),
    ).rejects.toMatchObject({
      code: 'CUSTOMER_ID_UNKNOWN',
      message: expect.stringMatching(/registered outside bulkorder/),
    });
    await expect(portal.loginUrlFor({ email: 'nobody@example.nl', companyId: COMPANY })).rejects.toMatchObject({
      code: 'CUSTOMER_ID_UNKNOWN',
      exitCode: 4,
    });
    await expect(
      portal.loginUrlFor({ email: 'anna.devries@example.nl', companyId: 'not-a-uuid' }),
    ).rejects.toMatchObject({ code: 'COMPANY_ID_INVALID', exitCode: 2 });
    await expect(portal.loginUrlFor({ customerId: '9d1f7c1e-0000-4000-8000-000000000000' })).rejects.toMatchObject({
      code: 'CUSTOMER_NOT_FOUND',
      exitCode: 4,
    });

    // customerIds of one environment are never found from the other.
    const production = await openLoginPortal(rig.config, rig.logger, {
      prefix: redisPrefix(rig.config, 'cafetariaplan').replace(':acceptance:', ':production:'),
    });
    try {
      await expect(
        production.loginUrlFor({ email: 'anna.devries@example.nl', companyId: COMPANY }),
      ).rejects.toMatchObject({ code: 'CUSTOMER_ID_UNKNOWN' });
    } finally {
      await production.close();
    }
  }, 40_000);

  it('holds an account sent without an answer instead of registering it again', async () => {
    rig = await deliveryRig(
      'accounts-held',
      { faults: { script: [{ path: 'accounts', status: 201, noAnswer: true, store: true }] } },
      { ...CAFETARIAPLAN, BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300' },
    );
    const file = await rig.writeFile(
      'one.csv',
      `email,firstName,lastName,isoLanguageCode,companyId\nlone@example.nl,Lone,Wolf,nl,${COMPANY}\n`,
    );
    services = await openServices(rig.config, ACCOUNTS);
    worker = await startAccountDelivery(rig.config, rig.logger, {
      prefix: redisPrefix(rig.config, 'cafetariaplan'),
      delivery: { ...rig.config.delivery, concurrency: 1 },
    });
    const imported = await accountsImport(rig, services, file);
    const { batch } = await followBatch(services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 20_000,
      out: devNull(),
    });
    expect(batch).toMatchObject({ delivered: 0, held: 1, dead: 0 });
    expect(rig.simulator.counters().accountsCreated).toBe(1);
    expect(await services.redis.zcard(services.keys.parkedIndex('held'))).toBe(1);
    expect((await accountsImport(rig, services, file)).counts).toMatchObject({ enqueued: 0, skippedHeld: 1 });
  }, 30_000);
});

function devNull(): NodeJS.WriteStream {
  return { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;
}
