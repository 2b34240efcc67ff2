/**
 * bench/lib/commandMonitor.ts: MONITOR started while other clients keep Redis busy (as in
 * bench/commandBreakdown.ts, where the worker runs before the monitor starts) charges each
 * command to its caller. ioredis 6's own `monitor()` threw "Command queue state error" here when
 * the first watched commands came in the same read as MONITOR's OK.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchRedis, type BenchRedis } from '../../bench/lib/benchRedis.js';
import { monitorCommands } from '../../bench/lib/commandMonitor.js';

const PREFIX = 'monitor-test';
const SCRIPT = "return redis.call('INCR', KEYS[1])";

describe('monitorCommands', () => {
  let redis: BenchRedis;
  beforeAll(async () => {
    redis = await startBenchRedis();
  }, 30_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it('counts commands by caller and key shape while Redis is busy as it starts', async () => {
    const busy = new Redis(redis.url);
    let running = true;
    // A stream of pipelined commands, so MONITOR's OK shares its read with watched commands.
    const flood = (async () => {
      while (running) {
        const pipeline = busy.pipeline();
        for (let i = 0; i < 200; i++) pipeline.set(`${PREFIX}:n:${i}`, 'x');
        await pipeline.exec();
      }
    })();
    try {
      const sha = (await redis.client.script('LOAD', SCRIPT)) as string;
      const names = new Map([[sha, 'counter']]);
      for (let round = 0; round < 5; round++) {
        const monitor = await monitorCommands(redis.client, names, PREFIX);
        for (let i = 0; i < 3; i++) await redis.client.evalsha(sha, 1, `${PREFIX}:ledger:a${i}`);
        await redis.client.hset(`${PREFIX}:batch:b1`, 'state', 'done');
        await redis.client.ping(); // MONITOR shows a command once it has run: one more round trip
        const rows = new Map(await monitor.stop());
        expect(rows.get('counter > EVALSHA')).toBe(3);
        expect(rows.get('counter > INCR ledger:*')).toBe(3);
        expect(rows.get('client > HSET batch:*')).toBe(1);
        expect(rows.get('client > SET n:*')).toBeGreaterThan(0);
      }
    } finally {
      running = false;
      await flood;
      busy.disconnect();
      await redis.client.flushall();
    }
  });
});
