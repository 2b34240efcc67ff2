import { readFile } from 'node:fs/promises';
import { reserveKeys } from '../helpers/ledgerReserve.js';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretUrl } from '../../src/config.js';
import { followBatch } from '../../src/batches/followBatch.js';
import { writeResults } from '../../src/batches/writeResults.js';
import type { ParkedRecord } from '../../src/deliveryJob.js';
import { ACCOUNTS } from '../../src/kinds/accounts.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { openServices } from '../../src/services.js';
import { CAFETARIAPLAN, deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { startTestCluster, type TestCluster } from '../helpers/redisCluster.js';
import { createRedis, deleteKeysUnder } from '../../src/redis.js';
import { keyspace } from '../../src/keyspace.js';
import { createLogger } from '../../src/logger.js';
import { CircuitBreaker } from '../../src/worker/circuitBreaker.js';
import { testPrefix } from '../helpers/redis.js';

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

let cluster: TestCluster | undefined;
let rig: DeliveryRig | undefined;
beforeAll(async () => {
  cluster = await startTestCluster();
}, 60_000);
afterAll(async () => {
  await rig?.close();
  await cluster?.stop();
});

/** Every key on every master of the cluster that starts with `start`. */
async function keysStartingWith(redis: Cluster, start: string): Promise<string[]> {
  const found: string[] = [];
  for (const node of redis.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'COUNT', 1000);
      cursor = next;
      found.push(...keys.filter((key) => key.startsWith(start)));
    } while (cursor !== '0');
  }
  return found;
}

async function slotOf(redis: Cluster, key: string): Promise<number> {
  return Number(await redis.call('CLUSTER', 'KEYSLOT', key));
}

describe("Redis Cluster (a real local cluster: .ci/run's, or three nodes of the test's own)", () => {
  it('imports, delivers, dead-letters and reports a file with every key of a kind in one slot', async () => {
    rig = await deliveryRig('cluster', {}, { ...CAFETARIAPLAN, BULKORDER_REDIS_CLUSTER_NODES: cluster!.nodes });
    const redis = rig.services.redis;
    expect(redis).toBeInstanceOf(Cluster);
    if (!(redis instanceof Cluster)) return;
    // A hash tag: BullMQ's and our scripts touch several keys at once, which a cluster allows only within one slot.
    expect(rig.prefix).toMatch(/^\{bulkorder-test-cluster-[0-9a-f]+:acceptance:[0-9a-z]+\}$/);

    const rows = [HEADER];
    for (let i = 1; i <= 8; i++) rows.push(orderRow(`CL-${i}`));
    rows.push(orderRow('CL-BAD', 5999)); // unknown product: the API refuses it with 422
    const file = await rig.writeFile('orders.csv', rows.join('\n') + '\n');
    await rig.startWorker({ concurrency: 4 });
    const imported = await rig.importFile(file);
    expect(imported.counts).toMatchObject({ orders: 9, valid: 9, enqueued: 9 });
    const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 25_000,
      out: quiet,
    });
    expect(settled).toBe(true);
    expect(batch).toMatchObject({ delivered: 8, dead: 1, held: 0 });
    expect(rig.simulator.counters().duplicateOrdersAccepted).toBe(0);

    // Dead letter, ledger and results read back through the cluster.
    const deadKeys = await redis.zrange(rig.services.keys.parkedIndex('dead'), '0', '-1');
    expect(deadKeys).toHaveLength(1);
    const dead = JSON.parse((await redis.get(rig.services.keys.parked('dead', deadKeys[0]!)))!) as ParkedRecord;
    expect(dead).toMatchObject({ httpStatus: 422, code: 'PRODUCT_UNKNOWN', orderRef: 'CL-BAD' });
    expect((await rig.services.ledger.get(deadKeys[0]!))?.state).toBe('dead');
    const resultsPath = `${rig.dir}/orders.results.csv`;
    const counts = await writeResults({
      file,
      ingest: {},
      batchId: imported.batchId,
      ledger: rig.services.ledger,
      outPath: resultsPath,
      kind: ORDERS,
    });
    expect(counts.byOutcome).toEqual({ delivered: 8, 'dead-lettered': 1 });
    expect(await readFile(resultsPath, 'utf8')).toMatch(/CL-BAD,\d+,dead-lettered,,422,PRODUCT_UNKNOWN/);

    // Every key of the orders (queue, ledger, batch, dead letters, token) is in one slot ...
    const orderKeys = await keysStartingWith(redis, rig.prefix);
    expect(orderKeys.length).toBeGreaterThan(9);
    expect(orderKeys.some((key) => key.includes(':token:'))).toBe(true);
    const slots = new Set(await Promise.all(orderKeys.map((key) => slotOf(redis, key))));
    expect(slots.size).toBe(1);
    // ... and another kind (another API, another target) gets a slot of its own: targets spread over the nodes.
    const accounts = await openServices(rig.config, ACCOUNTS);
    try {
      expect(accounts.keys.prefix).toMatch(/^\{.*:accounts\}$/);
      expect(await slotOf(redis, accounts.keys.ledger('x'))).not.toBe([...slots][0]);
      // A kind's own part goes inside the tag (src/keyspace.ts subPrefix): each kind a slot of its own.
      expect(ACCOUNTS.prefix(rig.prefix)).toBe(`${rig.prefix.slice(0, -1)}:accounts}`);
      // The accounts kind's services work on the cluster too (queue, ledger, batches in their own slot).
      const [reserved] = await reserveKeys(accounts.ledger, ['employee-1'], 'batch-1', false);
      expect(reserved?.outcome).toBe('reserved');
    } finally {
      await accounts.close();
    }
  }, 60_000);

  it("runs the breaker's scripts on the node of the breaker's slot (the successes' bucket too)", async () => {
    const redis = createRedis(
      { redisUrl: new SecretUrl('redis://127.0.0.1:6379'), redisClusterNodes: nodesOf(cluster!.nodes) },
      'worker',
    );
    const prefix = `{${testPrefix('cluster-breaker')}}`;
    const settings = {
      windowMs: 60_000,
      minAttempts: 3,
      minOrders: 3,
      minCustomers: 1,
      minBatches: 1,
      refusalRatio: 0.1,
      serverFailingRatio: 0.5,
      unreachableRatio: 0.5,
      credentialsMinAttempts: 3,
      openMs: 30_000,
      maxOpenMs: 600_000,
      trialCalls: 1,
      alertAfterMs: 1_800_000,
    };
    const breaker = new CircuitBreaker(redis, keyspace(prefix), createLogger({ level: 'silent' }), {
      settings,
      pauseQueue: async () => undefined,
      resumeQueue: async () => undefined,
    });
    try {
      // Each tick adds the successes counted since the last one: a call sent to another node than the
      // breaker's fails there (its keys are not local), so twelve ticks all land or the test fails.
      for (let i = 0; i < 12; i++) {
        await breaker.record({ kind: 'delivered', status: 201, body: {} }, `ok-${i}`);
        await breaker.tick();
      }
      for (let i = 0; i < 3; i++)
        await breaker.record(
          { kind: 'permanent', status: 400, code: 'BAD', message: 'bad', body: {}, bodyTruncated: false },
          `bad-${i}`,
        );
      expect((await breaker.status()).state).toBe('open');
      const buckets = (await keysStartingWith(redis as Cluster, keyspace(prefix).breakerBuckets)).sort();
      const counted = await Promise.all(buckets.map(async (key) => Number(await redis.get(key))));
      // 12 successes and 3 failures in the window's buckets.
      expect(counted.reduce((a, b) => a + b, 0)).toBe(15);
    } finally {
      await deleteKeysUnder(redis, prefix);
      redis.disconnect();
    }
  }, 60_000);
});

function nodesOf(nodes: string): { host: string; port: number }[] {
  return nodes.split(',').map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) }));
}
