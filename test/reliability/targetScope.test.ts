/**
 * Issue 13: the ledger belongs to the API it sent to. Another base URL under the same environment
 * name gets every order; a URL of the other environment, or an env-file overridden by the shell,
 * never starts a run; a wrong secret never borrows the right one's cached token.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { loadConfig } from '../../src/config.js';
import { openLoginPortal } from '../../src/accounts/openLoginPortal.js';
import { createApiTokenProvider } from '../../src/delivery/apiTokenProvider.js';
import { createCafetariaplanClient } from '../../src/delivery/cafetariaplanClient.js';
import { createHttpTransport } from '../../src/delivery/httpTransport.js';
import { requireApi } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { CAFETARIAPLAN, deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';

const rigs: DeliveryRig[] = [];
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((rig) => rig.close()));
});

async function rig(name: string, env: Record<string, string> = {}): Promise<DeliveryRig> {
  const made = await deliveryRig(name, {}, env);
  rigs.push(made);
  return made;
}

describe('the ledger is scoped by the target, not by the environment name', () => {
  it('same environment, another base URL: the new API gets every order', async () => {
    // One Redis namespace root, one environment name, two APIs (two simulators on port 0).
    const shared = { BULKORDER_REDIS_PREFIX: `bulkorder-test-target-${randomBytes(4).toString('hex')}` };
    const first = await rig('target-a', shared);
    const second = await rig('target-b', shared);
    expect(first.config.env).toBe(second.config.env);
    expect(first.prefix).not.toBe(second.prefix);
    const rows = [HEADER];
    for (let i = 1; i <= 42; i++) rows.push(orderRow(`MOVE-${i}`));
    const text = rows.join('\n') + '\n';
    const counts = [];
    for (const target of [first, second]) {
      await target.startWorker({ concurrency: 4 });
      const imported = await target.importFile(await target.writeFile('night.csv', text));
      expect(imported.counts).toMatchObject({ valid: 42, enqueued: 42, skippedDelivered: 0 });
      const { batch, settled } = await followBatch(target.services.batches, imported.batchId, {
        pollMs: 100,
        timeoutMs: 30_000,
        out: devNull(),
      });
      expect(settled).toBe(true);
      expect(batch.delivered).toBe(42);
      counts.push(target.simulator.counters());
    }
    expect(counts.map((c) => c.ordersAccepted)).toEqual([42, 42]);
    expect(counts.map((c) => c.duplicateOrdersAccepted)).toEqual([0, 0]);
    recordReliability({
      fault: 'BULKORDER_BASE_URL changed to another API, same BULKORDER_ENV, same file imported again',
      behaviour:
        'the new API got every order (its own ledger: environment + base URL + client id); 0 skipped as already delivered',
      orders: 84,
      lost: 84 - counts[0]!.ordersAccepted - counts[1]!.ordersAccepted,
      duplicates: counts[0]!.duplicateOrdersAccepted + counts[1]!.duplicateOrdersAccepted,
      held: 0,
    });
  }, 90_000);
});

describe('the environment must agree with the URL (exit 2, both variables named)', () => {
  it('refuses a production URL under acceptance, an acceptance URL under production, and an unknown one under acceptance', async () => {
    const target = await rig('target-refuse');
    const cases: Record<string, string>[] = [
      // The simulator's own host declared production: under acceptance (the default) it is refused.
      { BULKORDER_PRODUCTION_HOSTS: '127.0.0.1' },
      {
        BULKORDER_ENV: 'production',
        BULKORDER_CONFIRM_PRODUCTION: 'yes',
        BULKORDER_BASE_URL: 'https://api-acc.vendor.nl',
      },
      { BULKORDER_BASE_URL: 'https://api.vendor.nl' },
    ];
    const runs = await Promise.all(
      cases.map(async (env) => {
        const cli = await runCli(['import', join(target.dir, 'none.csv')], { ...target.env, ...env });
        return { code: cli.code, output: cli.output };
      }),
    );
    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.output).toMatch(/BULKORDER_ENV/);
      expect(run.output).toMatch(/BULKORDER_BASE_URL/);
    }
    expect(runs[0]!.output).toMatch(/production host/);
    expect(runs[1]!.output).toMatch(/acceptance host/);
    expect(runs[2]!.output).toMatch(/BULKORDER_ACCEPTANCE_HOSTS/);
    expect(target.simulator.counters().requests).toBe(0);
    recordReliability({
      fault:
        'a production URL under BULKORDER_ENV=acceptance (and an acceptance URL under production, an unknown host under acceptance)',
      behaviour: 'refused at start, exit 2, BULKORDER_ENV and BULKORDER_BASE_URL named; nothing sent',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 60_000);

  it('the env-file wins over an exported BULKORDER_ENV, and the banner and `config` say where each value came from', async () => {
    const target = await rig('target-envfile');
    const dir = await mkdtemp(join(tmpdir(), 'bulkorder-envfile-'));
    try {
      const file = join(dir, 'production.env');
      await writeFile(
        file,
        'BULKORDER_ENV=production\nBULKORDER_CONFIRM_PRODUCTION=yes\nBULKORDER_BASE_URL=https://api.vendor.nl\nBULKORDER_PRODUCTION_HOSTS=api.vendor.nl\n',
      );
      const { BULKORDER_BASE_URL: _url, ...inherited } = target.env;
      const shell = { ...inherited, BULKORDER_ENV: 'acceptance', LOG_LEVEL: 'info' };
      const config = await runCli(['config', '--json', '--env-file', file], shell);
      const status = await runCli(['import', join(dir, 'night.csv'), '--env-file', file], {
        ...shell,
        REDIS_URL: 'redis://127.0.0.1:9',
      });
      expect(config.code).toBe(0);
      const report = JSON.parse(config.output.slice(config.output.indexOf('{'))) as {
        env: string;
        envSource: string;
        baseUrlSource: string;
        shadowed: string[];
        namespaces: { business: string };
      };
      expect(report).toMatchObject({
        env: 'production',
        envSource: 'env-file',
        baseUrlSource: 'env-file',
        shadowed: ['BULKORDER_ENV'],
      });
      expect(report.namespaces.business).toMatch(/:production:[0-9a-f]{8}$/);
      expect(config.output).not.toContain(target.env.BULKORDER_BUSINESS_CLIENT_SECRET);
      // The banner comes before Redis is needed: production, from the env-file, the override named.
      expect(status.code).toBe(5);
      expect(status.output).toMatch(/the env-file overrides inherited environment variables: BULKORDER_ENV/);
      expect(status.output).toMatch(
        /PRODUCTION \(BULKORDER_ENV from the env-file, BULKORDER_BASE_URL https:\/\/api.vendor.nl from the env-file\)/,
      );
      expect(status.output).not.toMatch(/not process/);
      recordReliability({
        fault: 'BULKORDER_ENV=acceptance exported in the shell, production in the --env-file',
        behaviour:
          'the env-file won (production), the banner and `bulkorder config` named the override and each source',
        orders: 0,
        lost: 0,
        duplicates: 0,
        held: 0,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the shared token is keyed by the secret too', () => {
  it('with a wrong Cafetariaplan secret, login is refused instead of using the token cached under the right one', async () => {
    const target = await rig('target-secret', CAFETARIAPLAN);
    const logger = createLogger({ level: 'silent' });
    const settings = requireApi(target.config, 'cafetariaplan');
    const transport = createHttpTransport(settings.http);
    const client = createCafetariaplanClient(settings, {
      transport,
      logger,
      tokenProvider: createApiTokenProvider(settings, { transport, logger }),
    });
    const created = await client.createAccount({
      email: 'kees@example.nl',
      firstName: 'Kees',
      lastName: 'Bakker',
      isoLanguageCode: 'nl',
      companyId: '0b8e6f2e-2a52-4a4c-9a3b-4c6f1d2e3f40',
    });
    await transport.close();
    if (created.kind !== 'delivered') throw new Error(`account not created: ${created.kind}`);
    const customerId = created.customerId;

    const right = await openLoginPortal(target.config, logger);
    try {
      expect(await right.loginUrlFor({ customerId })).toMatch(/\/sso\//); // caches the token in Redis
    } finally {
      await right.close();
    }
    const wrongConfig = loadConfig({
      env: {},
      overrides: { ...target.env, ...CAFETARIAPLAN, BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'not-the-secret' },
    });
    const tokensBefore = target.simulator.counters().tokenRequests.cafetariaplan;
    const wrong = await openLoginPortal(wrongConfig, logger);
    try {
      await expect(wrong.loginUrlFor({ customerId })).rejects.toMatchObject({ code: 'TOKEN_REFUSED', exitCode: 2 });
    } finally {
      await wrong.close();
    }
    // It asked the token endpoint (and was refused) rather than reading the cache.
    expect(target.simulator.counters().tokenRequests.cafetariaplan).toBeGreaterThan(tokensBefore);
    recordReliability({
      fault: 'a wrong Cafetariaplan secret while a token fetched with the right one is cached in Redis',
      behaviour: 'login refused (TOKEN_REFUSED, exit 2); the cache is keyed by a hash of the secret, no URL printed',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 60_000);
});

function devNull(): NodeJS.WriteStream {
  return { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream;
}
