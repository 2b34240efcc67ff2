import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BatchStore } from '../../src/batches/batchStore.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import { recordOfChunk, type ChunkJobData, type DeliveryRecord } from '../../src/deliveryJob.js';
import { readJob, type JobOfOneData, type QueuedJobData } from '../../src/ledger/jobData.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { keyspace } from '../../src/keyspace.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { ORDERS_QUEUE, SCHEDULES_QUEUE } from '../../src/queues.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import type { ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { readBreakerStatus } from '../../src/worker/circuitBreaker.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, type DeliveryRig } from '../helpers/deliveryRig.js';
import type { StoredKey } from './writeFixtures.js';
import { JAN_RECIPIENT } from '../helpers/fixtures.js';

/**
 * Data written by earlier versions, read by this one. Each folder of fixtures/ holds every shape
 * one data version stored in Redis (test/compat/writeFixtures.ts wrote them with that version's
 * code); each is loaded under a fresh prefix and read through today's code. A fixture is never
 * rewritten: when a format changes, write a new folder beside the old ones, and keep these passing.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SAMPLES = resolve(here, '../../samples');
const VERSIONS = readdirSync(join(here, 'fixtures')).sort();
/** Parked records and ledger entries are read as of when they were written, however old the fixture is. */
const CENTURY = 100 * 365 * 24 * 3600_000;

interface Fixture<E> {
  shape: string;
  keys: StoredKey[];
  expect: E;
}

const redis = testRedis();
const prefixes: string[] = [];
const queues: Queue[] = [];

let rig: DeliveryRig | undefined;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
  for (const queue of queues.splice(0)) await queue.close();
  for (const prefix of prefixes.splice(0)) await deletePrefix(redis, prefix);
});
afterAll(() => redis.disconnect());

/** Loads one fixture under a fresh prefix (or `into` one); returns the prefix and what the fixture expects. */
async function load<E>(version: string, shape: string, into?: string): Promise<{ prefix: string; expect: E }> {
  const prefix = into ?? testPrefix(`compat-${shape}`);
  if (into === undefined) prefixes.push(prefix);
  const text = readFileSync(join(here, 'fixtures', version, `${shape}.json`), 'utf8')
    .replaceAll('{prefix}', prefix)
    .replaceAll('{samples}', SAMPLES);
  const fixture = JSON.parse(text) as Fixture<E>;
  for (const { key, type, value } of fixture.keys) {
    if (type === 'string') await redis.set(key, value as string);
    else if (type === 'hash') await redis.hset(key, value as Record<string, string>);
    else if (type === 'zset')
      for (const [member, score] of value as [string, string][]) await redis.zadd(key, score, member);
    else if (type === 'set') await redis.sadd(key, ...(value as string[]));
    else await redis.rpush(key, ...(value as string[]));
  }
  return { prefix, expect: fixture.expect };
}

function ordersQueue(prefix: string): Queue<QueuedJobData<OrderPayload>> {
  const queue = new Queue<QueuedJobData<OrderPayload>>(ORDERS_QUEUE, { connection: redis, prefix });
  queues.push(queue as Queue);
  return queue;
}

function ledgerOf(prefix: string): Ledger {
  return new Ledger(redis, keyspace(prefix), {
    queueName: ORDERS_QUEUE,
    retentionMs: CENTURY,
    parkedRetentionMs: CENTURY,
  });
}

/** True when the fixtures of `version` hold `shape` (shapes added in a later version are absent from earlier ones). */
function has(version: string, shape: string): boolean {
  return existsSync(join(here, 'fixtures', version, `${shape}.json`));
}

/**
 * What an import left around a job the fixture holds only as its hash: the job waiting in BullMQ
 * (LPUSH wait and the marker, as BullMQ's addStandardJob) and each of its records' ledger entry
 * queued by its batch, naming its chunk (`q`) when it is one. Returns the job's record keys.
 */
async function queueAsImported(prefix: string, jobId: string): Promise<string[]> {
  const keys = keyspace(prefix);
  const data = JSON.parse((await redis.hget(keys.job(ORDERS_QUEUE, jobId), 'data'))!) as QueuedJobData<OrderPayload>;
  const now = String(Date.now());
  const orderKeys = 'records' in data ? data.records.map((record) => record.key) : [data.key];
  const chunk = 'records' in data ? { q: jobId.slice(data.batchId.length + 1) } : {};
  for (const key of orderKeys) await redis.hset(keys.ledger(key), { s: 'queued', b: data.batchId, u: now, ...chunk });
  await redis.lpush(keys.job(ORDERS_QUEUE, 'wait'), jobId);
  await redis.zadd(keys.job(ORDERS_QUEUE, 'marker'), 0, '0');
  return orderKeys;
}

/** The records of a job as the worker reads them (jobs/deliveryProcessor.ts). */
function jobRecords(data: QueuedJobData<OrderPayload>, jobId: string): DeliveryRecord<OrderPayload>[] {
  const { chunk } = readJob(data, jobId, ORDERS.payloadCodec);
  return chunk.records.map((record) => recordOfChunk(chunk, record));
}

describe.each(VERSIONS)('data written by %s', (version) => {
  it('a chunk job unpacks into the same records and payloads', async () => {
    const { prefix, expect: want } = await load<{
      jobId: string;
      batchId: string;
      records: DeliveryRecord<OrderPayload>[];
    }>(version, 'chunk-job');
    const job = await ordersQueue(prefix).getJob(want.jobId);
    expect(job?.name).toBe(ORDERS.jobName);
    expect(readJob(job!.data, want.jobId, ORDERS.payloadCodec).chunkId).toBe(want.jobId);
    const records = jobRecords(job!.data, want.jobId);
    expect(records).toHaveLength(6);
    expect(records).toEqual(want.records.map((record) => ({ ...record, batchId: want.batchId })));
    // One literal check that does not lean on the fixture's own expectation.
    expect(records[0]!.payload).toEqual({
      businessCustomerId: 1003,
      recipient: JAN_RECIPIENT,
      products: [
        { productId: 5001, quantity: 1 },
        { productId: 5012, quantity: 2 },
        { productId: 5030, quantity: 1 },
      ],
    });
  });

  it('a chunk job the ledger kept (never queued) is found by the reconciler and unpacks', async () => {
    const { prefix, expect: want } = await load<{ chunkId: string; keys: string[]; payloads: OrderPayload[] }>(
      version,
      'kept-chunk-job',
    );
    const stranded = await ledgerOf(prefix).stranded(Number.MAX_SAFE_INTEGER, 100);
    expect(stranded).toHaveLength(1);
    expect(stranded[0]).toMatchObject({
      jobId: want.chunkId,
      state: 'queued',
      chunkKeys: want.keys,
      jobExists: false,
    });
    const job = JSON.parse(stranded[0]!.job!) as { name: string; data: ChunkJobData<OrderPayload> };
    expect(job.name).toBe(ORDERS.jobName);
    const records = jobRecords(job.data, want.chunkId);
    expect(records.map((record) => record.key)).toEqual(want.keys);
    expect(records.map((record) => record.payload)).toEqual(want.payloads);
  });

  it.runIf(has(version, 'job-of-one'))(
    'a job of one order (releases before chunks only) reads as a chunk of one, its entry naming no chunk',
    async () => {
      const { prefix, expect: want } = await load<{ jobId: string; data: JobOfOneData<OrderPayload> }>(
        version,
        'job-of-one',
      );
      const job = await ordersQueue(prefix).getJob(want.jobId);
      expect(job?.name).toBe('deliver-order');
      const { chunk, chunkId } = readJob(job!.data, want.jobId, ORDERS.payloadCodec);
      expect(chunkId).toBe('');
      expect(chunk.batchId).toBe(want.data.batchId);
      expect(chunk.records).toEqual([
        {
          key: want.jobId,
          lines: want.data.lines,
          orderRef: want.data.orderRef,
          payload: want.data.payload,
        },
      ]);
      expect(chunk.records[0]!.payload.businessCustomerId).toBe(1001);
    },
  );

  it.runIf(has(version, 'requeued-job'))(
    'an order sent again from the dead letters reads as a chunk of one with its own file and cells',
    async () => {
      const { prefix, expect: want } = await load<{
        jobId: string;
        batchId: string;
        /** Absent in fixtures whose job id was the order's key. */
        orderKey?: string;
      }>(version, 'requeued-job');
      const job = await ordersQueue(prefix).getJob(want.jobId);
      const [record, ...more] = jobRecords(job!.data, want.jobId);
      expect(more).toEqual([]);
      // Its own file and cells: a requeue's batch is not the file's.
      expect(record).toMatchObject({
        key: want.orderKey ?? want.jobId,
        batchId: want.batchId,
        file: join(SAMPLES, 'gift-orders.csv'),
      });
      expect(record!.cells).toHaveLength(1);
      expect(await ledgerOf(prefix).get(record!.key)).toMatchObject({ state: 'queued', batchId: want.batchId });
    },
  );

  it('jobs it left queued are each delivered exactly once by a worker of this version (counted at the API)', async () => {
    rig = await deliveryRig(`compat-${version}`);
    const prefix = rig.prefix;
    let orderKeys: string[];
    if (has(version, 'queued-jobs')) {
      // A whole namespace as the import, `dead-letters retry` and the breaker's burst of that version left it.
      const { expect: want } = await load<{ orderKeys: string[] }>(version, 'queued-jobs', prefix);
      orderKeys = want.orderKeys;
    } else {
      // Only the jobs' hashes were kept: what their import left around them is put back.
      const one = await load<{ jobId: string }>(version, 'job-of-one', prefix);
      const chunk = await load<{ jobId: string }>(version, 'chunk-job', prefix);
      orderKeys = [
        ...(await queueAsImported(prefix, one.expect.jobId)),
        ...(await queueAsImported(prefix, chunk.expect.jobId)),
      ];
    }
    expect(orderKeys.length).toBeGreaterThan(1);
    await rig.startWorker();
    const ledger = rig.services.ledger;
    let entries: Awaited<ReturnType<typeof ledger.getMany>> = [];
    await waitFor(async () => {
      const counts = await rig!.services.queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      entries = await ledger.getMany(orderKeys);
      const left = Object.values(counts).reduce((sum, n) => sum + n, 0);
      return left === 0 && entries.every((entry) => entry?.state === 'delivered' || entry?.state === 'dead');
    }, 'every order of the fixture ended and no job left');
    const delivered = orderKeys.filter((_, i) => entries[i]!.state === 'delivered');
    // The samples hold orders the API refuses (an unknown product): sent once too, and dead-lettered.
    expect(delivered.length).toBeGreaterThan(orderKeys.length / 2);
    // Counted at the API: one request per order, each delivered one stored once, nothing else stored.
    expect(rig.simulator.counters().apiRequests.business).toBe(orderKeys.length);
    const stored = rig.simulator.orders().map((order) => order.idempotencyKey);
    expect(stored.sort()).toEqual(delivered.sort());
    expect(rig.simulator.counters().duplicateOrdersAccepted).toBe(0);
  });

  it('a ledger entry reads as delivered with its remote id and fingerprint', async () => {
    const { prefix, expect: want } = await load<{ orderKey: string; entry: Record<string, unknown> }>(
      version,
      'ledger-entry',
    );
    const entry = await ledgerOf(prefix).get(want.orderKey);
    expect(entry).toEqual(want.entry);
    expect(entry).toMatchObject({ state: 'delivered', remoteId: 'R-100001', httpStatus: 201, attempts: 1 });
  });

  it.each([
    ['dead-letter', 'dead'],
    ['held-record', 'held'],
  ] as const)('%s: listed with its record and ledger entry', async (shape, kind) => {
    const { prefix, expect: want } = await load<{ orderKey: string; record: Record<string, unknown> }>(version, shape);
    const ledger = ledgerOf(prefix);
    const items = await new ParkedStore(redis, keyspace(prefix), ledger, kind).select();
    expect(items).toHaveLength(1);
    expect(items[0]!.record).toEqual(want.record);
    expect(items[0]!.record).toMatchObject({ kind, key: want.orderKey });
    expect(items[0]!.entry?.state).toBe(kind);
  });

  it('a batch shows its counts', async () => {
    const { prefix, expect: want } = await load<{ batchId: string; batch: Record<string, unknown> }>(version, 'batch');
    const batches = new BatchStore(redis, keyspace(prefix), CENTURY);
    const batch = await batches.get(want.batchId);
    // Every field version 1 stored reads back unchanged; a count added later reads as 0.
    expect(batch).toMatchObject(want.batch);
    expect(batch?.skippedResults).toBe(0);
    expect(batch).toMatchObject({
      importState: 'imported',
      file: join(SAMPLES, 'gift-orders.csv'),
      orders: 20,
      enqueued: 20,
      dead: 1,
      held: 1,
      delivered: 1,
    });
    expect((await batches.list()).map((b) => b.id)).toContain(want.batchId);
  });

  it('a schedule lists with its cron, zone and source', async () => {
    const { prefix, expect: want } = await load<{ name: string; cron: string; tz: string; source: string }>(
      version,
      'schedule',
    );
    const queue = new Queue<ScheduledImportData>(SCHEDULES_QUEUE, { connection: redis, prefix });
    queues.push(queue as Queue);
    const list = await new ScheduleStore(queue).list();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      name: 'nightly',
      cron: '0 2 * * *',
      tz: 'Europe/Amsterdam',
      source: '/srv/bulkorder/inbox/*.csv',
    });
    expect(list[0]).toMatchObject(want);
  });

  it('the breaker state reads as open, with its reason', async () => {
    const { prefix, expect: want } = await load<{ state: string; reason: string }>(version, 'breaker-state');
    const openedAt = Number((await redis.hget(`${prefix}:breaker:state`, 'openedAt')) ?? 0);
    const status = await readBreakerStatus(redis, keyspace(prefix), 1_800_000, openedAt + 1000);
    expect(status).toMatchObject({ state: 'open', reason: want.reason });
  });
});
