import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

/**
 * Issue 37: `import --wait` says what it waits for, and a Redis that starts evicting while it waits
 * stops it with exit 5 REDIS_EVICTION_POLICY (never a silent hang). A private redis-server, the real
 * CLI as a process, no worker (so nothing can be sent: the simulator counts 0).
 */
let rig: DeliveryRig | undefined;
let server: PrivateRedis | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
  await server?.stop();
  server = undefined;
});

describe('import --wait on a Redis that starts evicting', () => {
  it('says what it waits for, then exits 5 naming REDIS_EVICTION_POLICY; nothing is sent', async () => {
    server = await startPrivateRedis(['--maxmemory', '64mb', '--maxmemory-policy', 'noeviction']);
    rig = await deliveryRig('evicting-wait');
    const file = await rig.writeFile('evict.csv', ordersCsv('EV', 5));
    const imported = startCli(['import', file, '--wait'], { ...rig.env, REDIS_URL: server.url });
    await waitFor(
      () => /waiting for the orders of batch/.test(imported.output()),
      'import --wait saying what it waits for',
      120_000,
    );
    const admin = new Redis(server.url);
    try {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    } finally {
      admin.disconnect();
    }
    const code = await imported.exited;
    expect(code).toBe(5);
    expect(imported.output()).toMatch(/REDIS_EVICTION_POLICY|maxmemory-policy allkeys-lru/);
    expect(rig.simulator.counters().ordersAccepted).toBe(0);
    recordReliability({
      fault: 'Redis switched to maxmemory-policy allkeys-lru while `import --wait` waited',
      behaviour:
        'import --wait, which said what it waited for, stops with exit 5 REDIS_EVICTION_POLICY (workers pause on the same check); nothing sent',
      orders: 5,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 240_000);
});
