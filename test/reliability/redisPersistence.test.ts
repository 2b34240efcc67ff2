/**
 * Issue 13: a Redis that forgets on restart forgets what was delivered. Production refuses one
 * without persistence (AOF or RDB snapshots); acceptance and the demo run with a warning, said once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { assertRedisReady, redisPersistence } from '../../src/redis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';

const servers: PrivateRedis[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  await killAllCli();
  for (const client of clients.splice(0)) client.disconnect();
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function server(args: string[] = []): Promise<{ url: string; client: Redis }> {
  const started = await startPrivateRedis(args);
  servers.push(started);
  const client = new Redis(started.url, { maxRetriesPerRequest: 1 });
  clients.push(client);
  return { url: started.url, client };
}

/** A production configuration that reaches no API: status only reads Redis. */
const PRODUCTION = {
  BULKORDER_ENV: 'production',
  BULKORDER_CONFIRM_PRODUCTION: 'yes',
  BULKORDER_BASE_URL: 'https://api.vendor.nl',
  BULKORDER_USER_AGENT: 'Test-BulkorderTests',
  BULKORDER_BUSINESS_CLIENT_ID: 'c',
  BULKORDER_BUSINESS_CLIENT_SECRET: 's',
  BULKORDER_REDIS_PREFIX: 'bulkorder-test-persistence',
  LOG_LEVEL: 'silent',
};

describe('Redis without persistence', () => {
  it('is refused in production (exit 5, unless BULKORDER_ALLOW_VOLATILE_REDIS=yes) and warned about once in acceptance', async () => {
    const { url, client } = await server();
    await expect(assertRedisReady(client, url, { requirePersistence: true })).rejects.toMatchObject({
      code: 'REDIS_NOT_PERSISTENT',
      exitCode: 5,
    });
    const warnings: string[] = [];
    await assertRedisReady(client, url, { warn: (message) => warnings.push(message) });
    await assertRedisReady(client, url, { warn: (message) => warnings.push(message) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/appendonly no, save ''/);

    const runs = await Promise.all(
      [
        { ...PRODUCTION, REDIS_URL: url },
        { ...PRODUCTION, REDIS_URL: url, BULKORDER_ALLOW_VOLATILE_REDIS: 'yes' },
        {
          ...PRODUCTION,
          REDIS_URL: url,
          BULKORDER_ENV: 'acceptance',
          BULKORDER_CONFIRM_PRODUCTION: 'no',
          BULKORDER_BASE_URL: 'https://api.acc.vendor.nl',
        },
      ].map(async (env) => {
        const cli = startCli(['status'], env);
        return { code: await cli.exited, output: cli.output() };
      }),
    );
    const [refused, allowed, acceptance] = [runs[0]!, runs[1]!, runs[2]!];
    expect(refused.code).toBe(5);
    expect(refused.output).toMatch(
      /does not persist its data .*Production refuses it; BULKORDER_ALLOW_VOLATILE_REDIS=yes/s,
    );
    expect(allowed.code).toBe(0);
    expect(acceptance.code).toBe(0);
    expect(acceptance.output.match(/WARNING: Redis at .* does not persist/g)).toHaveLength(1);
    recordReliability({
      fault: 'Redis without persistence (appendonly no, no snapshots)',
      behaviour:
        'production refused at start (exit 5, unless BULKORDER_ALLOW_VOLATILE_REDIS=yes); acceptance ran with one warning',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 60_000);

  it('accepts AOF or RDB snapshots; where CONFIG is refused, reads INFO persistence and says so', async () => {
    const aof = await server(['--appendonly', 'yes']);
    const rdb = await server(['--save', '3600 1']);
    const managedVolatile = await server(['--rename-command', 'CONFIG', '']);
    const managedAof = await server(['--appendonly', 'yes', '--rename-command', 'CONFIG', '']);
    await assertRedisReady(aof.client, aof.url, { requirePersistence: true });
    await assertRedisReady(rdb.client, rdb.url, { requirePersistence: true });
    expect(await redisPersistence(rdb.client)).toEqual({
      persistent: true,
      evidence: "appendonly no, save '3600 1'",
      verified: true,
      known: true,
    });
    expect(await redisPersistence(managedAof.client)).toEqual({
      persistent: true,
      evidence: 'CONFIG refused; INFO persistence: aof_enabled:1',
      verified: false,
      known: true,
    });
    const unknown = await redisPersistence(managedVolatile.client);
    expect(unknown.persistent).toBe(false);
    expect(unknown.evidence).toMatch(/CONFIG refused; INFO persistence: aof_enabled:0/);
    await expect(
      assertRedisReady(managedVolatile.client, managedVolatile.url, { requirePersistence: true }),
    ).rejects.toMatchObject({ code: 'REDIS_NOT_PERSISTENT' });
  }, 60_000);
});
