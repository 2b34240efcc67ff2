/** The dashboard's per-minute counts and latency buckets, written by a worker and read back (src/metrics/minuteStats.ts). */
import { afterAll, describe, expect, it } from 'vitest';
import { keyspace } from '../../src/keyspace.js';
import { createMinuteStats, readMinuteStats } from '../../src/metrics/minuteStats.js';
import type { Outcome } from '../../src/delivery/classifyOutcome.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';

const redis = testRedis();
const prefix = testPrefix('minute-stats');
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('minute stats', () => {
  it('counts outcomes and request latencies per minute, summed over flushes, for one API only', async () => {
    const target = { redis, keys: keyspace(prefix) };
    const stats = createMinuteStats({ business: target }, { flushMs: 60_000 });
    const delivered: Outcome = { kind: 'delivered', status: 201, body: undefined };
    // 20 ms (bucket 0, six of eight: p50 is its bound, 25 ms), 40 ms (bucket 1), 3 s (bucket 7: p95 is 5 s).
    for (let i = 0; i < 6; i++) stats.request('business', delivered, 0.02);
    stats.request('business', delivered, 0.04);
    stats.request('business', delivered, 3);
    stats.request('cafetariaplan', delivered, 0.02); // no target: dropped at the flush
    for (let i = 0; i < 5; i++) stats.order('business', 'delivered');
    stats.order('business', 'dead_lettered');
    stats.order('business', 'held');
    stats.order('business', 'superseded'); // not charted
    await stats.flush();
    stats.order('business', 'delivered');
    await stats.close();

    const { points, p50Ms, p95Ms } = await readMinuteStats(target);
    const sum = (field: 'delivered' | 'refused' | 'held') => points.reduce((a, p) => a + p[field], 0);
    expect({ delivered: sum('delivered'), refused: sum('refused'), held: sum('held') }).toEqual({
      delivered: 6,
      refused: 1,
      held: 1,
    });
    expect(p50Ms).toBe(25);
    expect(p95Ms).toBe(5000);
    // The fields written, over this minute and the one before (the test may straddle a minute's end).
    const minute = Math.floor(Date.now() / 60_000);
    const fields = new Set<string>();
    for (const m of [minute - 1, minute])
      for (const field of Object.keys(await redis.hgetall(keyspace(prefix).statsMinute(m)))) fields.add(field);
    expect([...fields].sort()).toEqual(['delivered', 'held', 'lat:0', 'lat:1', 'lat:7', 'refused']);
  });
});
