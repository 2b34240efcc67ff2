import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BatchStore } from '../../src/batches/batchStore.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import {
  isChunk,
  recordOfChunk,
  type AnyDeliveryJobData,
  type ChunkJobData,
  type DeliveryJobData,
} from '../../src/deliveryJob.js';
import { checkJobVersion, readChunk } from '../../src/ledger/jobData.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { keyspace } from '../../src/keyspace.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { ORDERS_QUEUE, SCHEDULES_QUEUE } from '../../src/queues.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import type { ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { readBreakerStatus } from '../../src/worker/circuitBreaker.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import type { StoredKey } from './writeFixtures.js';

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

afterEach(async () => {
  for (const queue of queues.splice(0)) await queue.close();
  for (const prefix of prefixes.splice(0)) await deletePrefix(redis, prefix);
});
afterAll(() => redis.disconnect());

/** Loads one fixture under a fresh prefix; returns the prefix and what the fixture expects. */
async function load<E>(version: string, shape: string): Promise<{ prefix: string; expect: E }> {
  const prefix = testPrefix(`compat-${shape}`);
  prefixes.push(prefix);
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

function ordersQueue(prefix: string): Queue<AnyDeliveryJobData<OrderPayload>> {
  const queue = new Queue<AnyDeliveryJobData<OrderPayload>>(ORDERS_QUEUE, { connection: redis, prefix });
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

/** The records of a chunk job as the worker reads them (jobs/deliveryProcessor.ts). */
function chunkRecords(data: AnyDeliveryJobData<OrderPayload>, jobId: string): DeliveryJobData<OrderPayload>[] {
  if (!isChunk(data)) throw new Error('not a chunk job');
  const chunk = readChunk(data, jobId, ORDERS.payloadCodec);
  return chunk.records.map((record) => recordOfChunk(chunk, record));
}

describe.each(VERSIONS)('data written by %s', (version) => {
  it('a chunk job unpacks into the same records and payloads', async () => {
    const { prefix, expect: want } = await load<{
      jobId: string;
      batchId: string;
      records: DeliveryJobData<OrderPayload>[];
    }>(version, 'chunk-job');
    const job = await ordersQueue(prefix).getJob(want.jobId);
    expect(job?.name).toBe(ORDERS.chunkJobName);
    const records = chunkRecords(job!.data, want.jobId);
    expect(records).toHaveLength(6);
    expect(records).toEqual(want.records.map((record) => ({ ...record, batchId: want.batchId })));
    // One literal check that does not lean on the fixture's own expectation.
    expect(records[0]!.payload).toEqual({
      businessCustomerId: 1003,
      recipient: {
        address: {
          firstName: 'Jan',
          lastName: 'de Vries',
          street: 'Keizersgracht',
          streetNumber: 112,
          postalCode: '1015 CX',
          city: 'Amsterdam',
          countryCode: 'NL',
        },
        languageCode: 'nl',
        email: 'jan.devries@example.nl',
        telephoneNumber: '+31612345678',
      },
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
      orderKey: want.chunkId,
      state: 'queued',
      chunkKeys: want.keys,
      jobExists: false,
    });
    const job = JSON.parse(stranded[0]!.job!) as { name: string; data: ChunkJobData<OrderPayload> };
    expect(job.name).toBe(ORDERS.chunkJobName);
    const records = chunkRecords(job.data, want.chunkId);
    expect(records.map((record) => record.key)).toEqual(want.keys);
    expect(records.map((record) => record.payload)).toEqual(want.payloads);
  });

  it('a job of one order reads as it was written', async () => {
    const { prefix, expect: want } = await load<{ jobId: string; data: DeliveryJobData<OrderPayload> }>(
      version,
      'job-of-one',
    );
    const job = await ordersQueue(prefix).getJob(want.jobId);
    expect(job?.name).toBe(ORDERS.jobName);
    expect(isChunk(job!.data)).toBe(false);
    const data = job!.data as DeliveryJobData<OrderPayload>;
    checkJobVersion(data, want.jobId);
    expect(data).toMatchObject({
      key: want.jobId,
      batchId: want.data.batchId,
      lines: want.data.lines,
      payload: want.data.payload,
    });
    expect(data.payload.businessCustomerId).toBe(1001);
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
