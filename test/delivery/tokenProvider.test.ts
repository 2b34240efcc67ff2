/**
 * The shared token: single-flight in a process, one refresh at a time across processes
 * through Redis (here: several providers, each with its own memory, as separate processes
 * would have), compare-and-delete invalidation, and failures that reach the waiters.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { TokenProvider } from '../../src/delivery/tokenProvider.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { apiRig, type ApiRig } from './support/apiRig.js';

let rig: ApiRig | undefined;
let redis: Redis | undefined;
let prefix = '';
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  if (redis !== undefined) {
    await deletePrefix(redis, prefix);
    redis.disconnect();
    redis = undefined;
  }
});

async function setup(
  options: Parameters<typeof apiRig>[0] = {},
): Promise<{ rig: ApiRig; redis: Redis; shared: () => TokenProvider }> {
  rig = await apiRig(options);
  redis = testRedis();
  prefix = testPrefix('token');
  const r = redis;
  const g = rig;
  return {
    rig: g,
    redis: r,
    shared: () => g.tokenProvider('business', { redis: r, keyPrefix: prefix, endpoint: { attempts: 1 } }),
  };
}

describe('token provider', () => {
  it('single-flight in one process: 50 callers, one token request', async () => {
    rig = await apiRig({ faults: { tokenLatencyMs: 50 } });
    const provider = rig.tokenProvider('business');
    const tokens = await Promise.all(Array.from({ length: 50 }, () => provider.getToken()));
    expect(new Set(tokens.map((t) => t.id)).size).toBe(1);
    expect(rig.simulator.counters().tokenRequests.business).toBe(1);
  });

  it('across providers sharing Redis: one token request, the others wait for its result', async () => {
    const { rig, shared } = await setup({ faults: { tokenLatencyMs: 100 } });
    const providers = [shared(), shared(), shared(), shared()];
    const tokens = await Promise.all(providers.flatMap((p) => [p.getToken(), p.getToken()]));
    expect(new Set(tokens.map((t) => t.id)).size).toBe(1);
    expect(rig.simulator.counters().tokenRequests.business).toBe(1);
  });

  it('keeps every key under the prefix, with the token expiring when it does', async () => {
    const { redis, shared } = await setup();
    const token = await shared().getToken();
    const keys = await redis.keys(`${prefix}:*`); // every page: the shared Redis may hold many other keys
    expect(keys).toEqual([expect.stringMatching(new RegExp(`^${prefix}:token:business:[0-9a-f]{12}$`))]);
    const pttl = await redis.pttl(keys[0] as string);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(token.lifetimeMs);
  });

  it('invalidation is compare-and-delete: a late 401 for an old token keeps the new one', async () => {
    const { rig, shared } = await setup();
    const a = shared();
    const b = shared();
    const first = await a.getToken();
    expect((await b.getToken()).id).toBe(first.id);
    await a.invalidate(first);
    const second = await a.getToken();
    expect(second.id).not.toBe(first.id);
    await b.invalidate(first); // B's request with the old token failed late
    expect((await b.getToken()).id).toBe(second.id);
    expect(rig.simulator.counters().tokenRequests.business).toBe(2);
  });

  it('a refresh failure reaches the processes that waited for it, without more token requests', async () => {
    const { rig, shared } = await setup({ faults: { tokenLatencyMs: 300, tokenFailureRate: 1 } });
    const holder = shared().getToken();
    while (rig.simulator.counters().tokenRequests.business === 0)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const waiter = shared().getToken();
    // Both awaited at once: the waiter may fail while the holder is awaited, and a rejection seen before its handler is unhandled.
    await Promise.all([
      expect(holder).rejects.toMatchObject({ code: 'TOKEN_ENDPOINT_UNAVAILABLE', exitCode: 5 }),
      expect(waiter).rejects.toMatchObject({ code: 'TOKEN_ENDPOINT_UNAVAILABLE', exitCode: 5 }),
    ]);
    expect(rig.simulator.counters().tokenRequests.business).toBe(1);
  });

  it('a lock left by a dead process expires, and the next process refreshes', async () => {
    const { rig, redis, shared } = await setup();
    const provider = shared();
    await provider.getToken();
    const keys = await redis.keys(`${prefix}:token:*`);
    const key = keys[0] as string;
    await redis.del(key);
    await redis.set(`${key}:lock`, 'dead-process', 'PX', 300);
    const other = shared();
    expect((await other.getToken()).id).toMatch(/^[0-9a-f]{16}$/);
    expect(rig.simulator.counters().tokenRequests.business).toBe(2);
  });

  // One clock for the simulator and both providers, moved by the test: a token's hour passes in
  // steps of ten minutes, so what is counted does not depend on how fast this machine runs.
  it('refreshes ahead of expiry: one token request per lifetime while in use, shared by both providers', async () => {
    let clock = Date.now(); // Redis expires the shared token at its expiry by this clock: never before the test ends
    const now = () => clock;
    const { rig, redis } = await setup({ tokenLifetimeSeconds: 3600, clock: now });
    const shared = () =>
      rig.tokenProvider('business', { redis, keyPrefix: prefix, endpoint: { attempts: 1 }, cache: { now } });
    const providers = [shared(), shared()];
    const seen: string[][] = [];
    for (let step = 0; step <= 18; step++) {
      seen.push((await Promise.all(providers.map((p) => p.getToken()))).map((t) => t.id));
      clock += 10 * 60_000;
    }
    // Three hours of use: the token of each hour, refreshed when the hour is up (36 s ahead, 1%), never twice.
    const ids = [...new Set(seen.flat())];
    expect(ids).toHaveLength(4);
    expect(seen.every(([a, b]) => a === b)).toBe(true);
    expect(seen.map(([a]) => ids.indexOf(a!))).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3]);
    expect(rig.simulator.counters().tokenRequests.business).toBe(4);
    expect(rig.simulator.counters().tokensIssued.business).toBe(4);
  });
});
