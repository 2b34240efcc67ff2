import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { redisRisk } from '../../src/redis.js';
import { redisSafety, startRedisGuard, type RedisSafety } from '../../src/worker/redisGuard.js';
import { startWorkerObservers } from '../../src/health/workerObservers.js';
import { createLogger } from '../../src/logger.js';
import { loadConfig } from '../../src/config.js';
import type { NotifyEvent } from '../../src/notify/notifyEvent.js';
import { deletePrefix } from '../helpers/redis.js';
import { waitFor } from '../helpers/cliProcess.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const logger = createLogger({ level: 'silent' });

async function server(args: string[] = []): Promise<{ url: string; client: Redis }> {
  const started: PrivateRedis = await startPrivateRedis(args);
  const client = new Redis(started.url, { maxRetriesPerRequest: 1 });
  cleanups.push(async () => {
    client.disconnect();
    await started.stop();
  });
  return { url: started.url, client };
}

/** A guard whose pauses and resumes are counted, looking every 50 ms. */
function guarded(client: Redis, policy: { requirePersistence: boolean; unverifiable: 'pause' | 'run' }) {
  const seen = { pauses: 0, resumes: 0, changes: [] as RedisSafety[] };
  const guard = startRedisGuard({
    redis: client,
    checkMs: 50,
    ...policy,
    pause: async () => void seen.pauses++,
    resume: () => void seen.resumes++,
    logger,
    onChange: (safety) => seen.changes.push(safety),
  });
  cleanups.push(async () => guard.stop());
  return { guard, seen };
}

describe('redisSafety: when a worker takes no jobs', () => {
  const risk = {
    evicting: false,
    policy: 'noeviction',
    persistent: true,
    verified: true,
    known: true,
    infoAllowed: true,
    evidence: 'e',
    persistenceEvidence: 'e',
  };
  const acceptance = { requirePersistence: false, unverifiable: 'run' as const };
  const production = { requirePersistence: true, unverifiable: 'run' as const };
  it.each([
    ['a fit Redis', risk, production, undefined],
    [
      'eviction, in acceptance too',
      { ...risk, evicting: true, policy: 'allkeys-lru' },
      acceptance,
      'REDIS_EVICTION_POLICY',
    ],
    ['no persistence in production', { ...risk, persistent: false }, production, 'REDIS_NOT_PERSISTENT'],
    ['no persistence in acceptance', { ...risk, persistent: false }, acceptance, undefined],
    ['CONFIG refused, policy run', { ...risk, verified: false }, production, undefined],
    [
      'CONFIG refused, policy pause',
      { ...risk, verified: false },
      { ...production, unverifiable: 'pause' as const },
      'REDIS_UNVERIFIABLE',
    ],
    ['CONFIG and INFO refused, acceptance', { ...risk, known: false, verified: false }, acceptance, undefined],
    [
      'CONFIG and INFO refused, production',
      { ...risk, known: false, verified: false },
      { ...production, requireVerifiable: true },
      'REDIS_UNVERIFIABLE',
    ],
    [
      'CONFIG and INFO refused, production with BULKORDER_ALLOW_UNVERIFIED_REDIS=yes',
      { ...risk, known: false, verified: false },
      { ...production, requireVerifiable: false },
      undefined,
    ],
  ])('%s', (_name, given, policy, code) => {
    const safety = redisSafety(given, policy);
    expect(safety.unsafe).toBe(code !== undefined);
    expect(safety.code).toBe(code);
  });
});

describe('the Redis guard of a worker (a private redis-server)', () => {
  it('pauses once while Redis evicts and resumes once when it is noeviction again', async () => {
    const { client } = await server(['--maxmemory-policy', 'noeviction']);
    const { guard, seen } = guarded(client, { requirePersistence: false, unverifiable: 'run' });
    await guard.check();
    expect(seen).toMatchObject({ pauses: 0, resumes: 0 });

    await client.config('SET', 'maxmemory-policy', 'volatile-lru');
    await waitFor(() => seen.pauses === 1, 'the pause');
    expect(guard.safety()).toMatchObject({ unsafe: true, code: 'REDIS_EVICTION_POLICY' });
    expect(guard.safety().reason).toMatch(/volatile-lru/);
    await new Promise((r) => setTimeout(r, 300)); // several looks: still one pause
    expect(seen.pauses).toBe(1);

    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await waitFor(() => seen.resumes === 1, 'the resume');
    expect(guard.safety().unsafe).toBe(false);
    expect(seen.changes.map((c) => c.unsafe)).toEqual([true, false]);
  });

  it('pauses for a Redis without persistence only in production, and for one refusing CONFIG only when told to', async () => {
    const volatile = await server();
    const acceptance = guarded(volatile.client, { requirePersistence: false, unverifiable: 'run' });
    const production = guarded(volatile.client, { requirePersistence: true, unverifiable: 'run' });
    expect((await acceptance.guard.check()).unsafe).toBe(false);
    expect(await production.guard.check()).toMatchObject({ unsafe: true, code: 'REDIS_NOT_PERSISTENT' });
    expect(production.seen.pauses).toBe(1);
    // Persistence turned on while running: the production worker takes jobs again.
    await volatile.client.config('SET', 'appendonly', 'yes');
    await waitFor(() => production.seen.resumes === 1, 'the resume');

    const managed = await server(['--appendonly', 'yes', '--rename-command', 'CONFIG', '']);
    expect((await redisRisk(managed.client)).verified).toBe(false);
    const trusting = guarded(managed.client, { requirePersistence: true, unverifiable: 'run' });
    const strict = guarded(managed.client, { requirePersistence: true, unverifiable: 'pause' });
    expect((await trusting.guard.check()).unsafe).toBe(false);
    expect(await strict.guard.check()).toMatchObject({ unsafe: true, code: 'REDIS_UNVERIFIABLE' });
  });

  it('a look Redis does not answer changes nothing', async () => {
    const started = await startPrivateRedis(['--maxmemory-policy', 'allkeys-lru']);
    const client = new Redis(started.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    cleanups.push(async () => client.disconnect());
    const { guard, seen } = guarded(client, { requirePersistence: false, unverifiable: 'run' });
    expect((await guard.check()).unsafe).toBe(true);
    await started.stop();
    expect((await guard.check()).unsafe).toBe(true);
    expect(seen).toMatchObject({ pauses: 1, resumes: 0 });
  });
});

describe("what the guard's pauses tell (observers of two worker processes on one Redis)", () => {
  it('one redis-unsafe and one redis-safe notification in all; /readyz and the gauge say it', async () => {
    const { url, client } = await server(['--appendonly', 'yes']);
    const bodies: NotifyEvent[] = [];
    const hook: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(body) as NotifyEvent);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => hook.close(r)));
    const prefix = `bulkorder-test-guard-${process.pid}`;
    const config = loadConfig({
      env: {},
      overrides: {
        REDIS_URL: url,
        BULKORDER_REDIS_PREFIX: prefix,
        BULKORDER_BASE_URL: 'http://127.0.0.1:9',
        BULKORDER_USER_AGENT: 'Test-BulkorderTests',
        BULKORDER_BUSINESS_CLIENT_ID: 'c',
        BULKORDER_BUSINESS_CLIENT_SECRET: 's',
        BULKORDER_NOTIFY_URLS: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
        BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1',
        LOG_LEVEL: 'silent',
      },
    });
    cleanups.push(() => deletePrefix(client, prefix));
    const first = await startWorkerObservers(config, logger, { httpPort: 0 });
    cleanups.push(() => first.close());
    const second = await startWorkerObservers(config, logger, {});
    cleanups.push(() => second.close());

    const unsafe: RedisSafety = { unsafe: true, code: 'REDIS_EVICTION_POLICY', reason: 'Redis evicts keys' };
    first.onRedisSafety('business', unsafe);
    second.onRedisSafety('business', unsafe);
    await waitFor(() => bodies.length >= 1, 'the redis-unsafe notification');
    const ready = await fetch(`${first.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toMatch(
      /"name":"redis-guard","ok":false,"detail":"REDIS_EVICTION_POLICY/,
    );
    expect(await (await fetch(`${first.url}/metrics`)).text()).toMatch(
      /bulkorder_worker_redis_unsafe\{api="business"\} 1/,
    );

    first.onRedisSafety('business', { unsafe: false });
    second.onRedisSafety('business', { unsafe: false });
    await waitFor(() => bodies.length >= 2, 'the redis-safe notification');
    await new Promise((r) => setTimeout(r, 300)); // the second process's announcements have had their chance
    expect(bodies.map((b) => b.event)).toEqual(['redis-unsafe', 'redis-safe']);
    expect(bodies[0]).toMatchObject({ code: 'REDIS_EVICTION_POLICY', env: 'acceptance' });
    expect(bodies[1]!.id).toBe(bodies[0]!.id.replace('redis-unsafe', 'redis-safe'));
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${first.url}/metrics`)).text()).toMatch(
      /bulkorder_worker_redis_unsafe\{api="business"\} 0/,
    );
  });
});
