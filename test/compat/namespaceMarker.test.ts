import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DataVersionError, ExitCode } from '../../src/errors.js';
import { keyspace } from '../../src/keyspace.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { DATA_VERSION, ensureNamespaceMarker, readNamespaceMarker } from '../../src/ledger/namespaceMarker.js';
import { createLogger } from '../../src/logger.js';
import { openServices } from '../../src/services.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { deletePrefix, testPrefix, testRedis, TEST_REDIS_URL } from '../helpers/redis.js';

/** The data version of a Redis namespace (`<prefix>:meta`), against real Redis, a fresh prefix per test. */

const redis = testRedis();
const prefixes: string[] = [];
const fresh = (name: string): string => {
  const prefix = testPrefix(name);
  prefixes.push(prefix);
  return prefix;
};

afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await deletePrefix(redis, prefix);
});
afterAll(() => redis.disconnect());

describe('the namespace marker', () => {
  it('is written once into an empty namespace: the first call created it, later ones find it', async () => {
    const keys = keyspace(fresh('marker-new'));
    expect(await readNamespaceMarker(redis, keys)).toBeUndefined();
    const first = await ensureNamespaceMarker(redis, keys, { processVersion: '1.2.3', now: 1000 });
    expect(first).toMatchObject({
      created: true,
      version: DATA_VERSION,
      marker: { dataVersion: DATA_VERSION, createdAt: 1000, createdBy: '1.2.3' },
    });
    expect(first.migratedFrom).toBeUndefined();
    const again = await ensureNamespaceMarker(redis, keys, { processVersion: '1.2.4', now: 2000 });
    expect(again).toMatchObject({
      created: false,
      version: DATA_VERSION,
      marker: { createdAt: 1000, createdBy: '1.2.3' },
    });
    expect(await redis.hgetall(keys.meta)).toEqual({
      dataVersion: String(DATA_VERSION),
      createdAt: '1000',
      createdBy: '1.2.3',
      epoch: first.marker.epoch,
    });
    expect(first.marker.epoch).toMatch(/^[0-9a-f]{16}$/);
    expect(again.marker.epoch).toBe(first.marker.epoch);
    // Forgotten and written again (a Redis restarted without persistence): another epoch.
    await redis.del(keys.meta);
    const reborn = await ensureNamespaceMarker(redis, keys, { processVersion: '1.2.4' });
    expect(reborn.created).toBe(true);
    expect(reborn.marker.epoch).not.toBe(first.marker.epoch);
  });

  it('of processes starting together, exactly one created it', async () => {
    const keys = keyspace(fresh('marker-race'));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => ensureNamespaceMarker(redis, keys, { processVersion: `p${i}` })),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.version))).toEqual(new Set([DATA_VERSION]));
  });

  it('a namespace with batches and no marker holds version 1 data: migrated to the current version, not "created"', async () => {
    const keys = keyspace(fresh('marker-v1'));
    await redis.zadd(keys.batchIndex, 1, 'b-20261125T180000-aaaaaa');
    const result = await ensureNamespaceMarker(redis, keys, { processVersion: '9.9.9', now: 5000 });
    expect(result).toMatchObject({
      created: false,
      version: DATA_VERSION,
      migratedFrom: 1,
      marker: { dataVersion: DATA_VERSION, upgradedAt: 5000, upgradedBy: '9.9.9' },
    });
  });

  it('an older stored version is migrated; a newer one is refused with DATA_VERSION_NEWER naming both versions, and left as it was', async () => {
    const keys = keyspace(fresh('marker-newer'));
    await redis.hset(keys.meta, 'dataVersion', '1', 'createdAt', '1', 'createdBy', '0.1.0');
    expect(await ensureNamespaceMarker(redis, keys, { processVersion: 'now' })).toMatchObject({
      version: DATA_VERSION,
      migratedFrom: 1,
    });

    await redis.hset(keys.meta, 'dataVersion', String(DATA_VERSION + 1), 'upgradedBy', '7.0.0');
    const refused = await ensureNamespaceMarker(redis, keys, { processVersion: '0.1.0' }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(DataVersionError);
    const error = refused as DataVersionError;
    expect(error.code).toBe('DATA_VERSION_NEWER');
    expect(error.exitCode).toBe(ExitCode.infrastructure);
    expect(error.message).toContain(`data version ${DATA_VERSION + 1} (written by bulkorder 7.0.0)`);
    expect(error.message).toContain(`knows versions up to ${DATA_VERSION}`);
    expect(error.details).toMatchObject({ stored: DATA_VERSION + 1, known: DATA_VERSION });
    expect(await redis.hget(keys.meta, 'dataVersion')).toBe(String(DATA_VERSION + 1));
  });
});

describe('a process opening its services', () => {
  const config = (prefix: string) =>
    loadConfig({
      env: {},
      overrides: {
        BULKORDER_BASE_URL: 'http://127.0.0.1:9',
        BULKORDER_BUSINESS_CLIENT_ID: 'c',
        BULKORDER_BUSINESS_CLIENT_SECRET: 's',
        BULKORDER_USER_AGENT: 'Test-BulkorderTests',
        BULKORDER_REDIS_PREFIX: prefix,
        REDIS_URL: TEST_REDIS_URL,
        LOG_LEVEL: 'silent',
      },
    });

  it('marks a new namespace; services and workers refuse to start on one of a newer bulkorder, touching nothing', async () => {
    // BULKORDER_REDIS_PREFIX takes no ':'; the services' namespace is under it (bulkorder:<env>:<target>).
    const prefix = `bulkorder-test-services-${randomBytes(4).toString('hex')}`;
    prefixes.push(prefix);
    const services = await openServices(config(prefix), ORDERS);
    try {
      expect(services.namespace).toMatchObject({ created: true, version: DATA_VERSION });
      expect(await redis.hget(services.keys.meta, 'dataVersion')).toBe(String(DATA_VERSION));
      await redis.hset(services.keys.meta, 'dataVersion', String(DATA_VERSION + 1));
    } finally {
      await services.close();
    }
    const keysBefore = (await redis.keys(`${prefix}*`)).sort();
    await expect(openServices(config(prefix), ORDERS)).rejects.toMatchObject({
      code: 'DATA_VERSION_NEWER',
      exitCode: ExitCode.infrastructure,
    });
    // A worker too: it takes no job of the newer bulkorder's queue.
    await expect(startBusinessDelivery(config(prefix), createLogger({ level: 'silent' }))).rejects.toMatchObject({
      code: 'DATA_VERSION_NEWER',
    });
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual(keysBefore);
  });
});
