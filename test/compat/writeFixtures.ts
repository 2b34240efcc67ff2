/**
 * Writes the compatibility fixtures of one version of the stored data (test/compat/fixtures/v<N>/):
 * every shape bulkorder keeps in Redis, written by the code of this checkout under a fresh prefix,
 * then dumped as {key, type, value} with the prefix replaced by `{prefix}`. Run once per data
 * version, BEFORE its format changes, and commit the output; test/compat/compatibility.test.ts
 * loads them into Redis and reads them with the current code, in every later version.
 *
 *   npx tsx test/compat/writeFixtures.ts v1
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { BatchStore } from '../../src/batches/batchStore.js';
import { parkedRecord, recordOfChunk, type ChunkJobData, type DeliveryRecord } from '../../src/deliveryJob.js';
import { importFile } from '../../src/importer/importFile.js';
import { readJob, toChunkRecord } from '../../src/ledger/jobData.js';
import type { OrderPayload, ValidRecord } from '../../src/ingest/types.js';
import { keyspace } from '../../src/keyspace.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { fingerprintOf } from '../../src/ledger/fingerprint.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { createLogger } from '../../src/logger.js';
import { chunkJobId, ORDERS_QUEUE, SCHEDULES_QUEUE } from '../../src/queues.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import type { ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { CircuitBreaker } from '../../src/worker/circuitBreaker.js';
import { requeueBurst } from '../../src/worker/requeueBurst.js';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import { retryDeadLetters } from '../../src/deadLetter/retryDeadLetters.js';
import { deletePrefix, testRedis } from '../helpers/redis.js';

const here = dirname(fileURLToPath(import.meta.url));
const version = process.argv[2] ?? 'v1';
const out = join(here, 'fixtures', version);
const SAMPLES = resolve(here, '../../samples');
/** Where the fixtures say their files were (a batch keeps its file's path); the samples are read from this checkout. */
const FILE_PLACEHOLDER = '{samples}';

/** One stored key as the fixtures hold it. */
export interface StoredKey {
  key: string;
  type: 'string' | 'hash' | 'zset' | 'set' | 'list';
  value: unknown;
}

async function main(): Promise<void> {
  const redis = testRedis();
  const prefix = `bulkorder-fixtures-${randomBytes(4).toString('hex')}`;
  const keys = keyspace(prefix);
  const logger = createLogger({ level: 'silent' });
  const queue = new Queue<ChunkJobData<OrderPayload>>(ORDERS_QUEUE, { connection: redis, prefix });
  const ledger = new Ledger(redis, keys, { queueName: ORDERS_QUEUE });
  const batches = new BatchStore(redis, keys, 90 * 24 * 3600_000);
  const deps = {
    queue,
    ledger,
    batches,
    env: 'acceptance',
    logger,
    jobOptions: { attempts: 5, backoff: { type: 'bulkorder' } },
    kind: ORDERS,
  };
  const dumps: Record<string, { about: string; keys: StoredKey[]; expect: unknown; prefix?: string }> = {};
  // A second namespace for the jobs left queued: nothing of the shapes above settles in it.
  const queuedPrefix = `bulkorder-fixtures-${randomBytes(4).toString('hex')}`;
  try {
    // One order to a job: gift-orders.csv (BULKORDER_ORDERS_PER_JOB=1; fixtures v1 and v2: a job of one, its key as id).
    const single = await importFile(
      join(SAMPLES, 'gift-orders.csv'),
      { rejectsPath: '/dev/null' },
      { ...deps, ordersPerJob: 1 },
    );
    // Chunk jobs: multi-line-orders.csv, ten orders to a job (orders of several product lines).
    const chunked = await importFile(
      join(SAMPLES, 'multi-line-orders.csv'),
      { rejectsPath: '/dev/null' },
      { ...deps, ordersPerJob: 10 },
    );

    const firstChunk = chunkJobId(chunked.batchId, 1);
    const chunkJob = await queue.getJob(firstChunk);
    dumps['chunk-job'] = {
      about: 'a chunk job (deliver-orders) as BullMQ keeps it: packed payloads, no cells',
      keys: [await dumpKey(redis, keys.job(ORDERS_QUEUE, firstChunk))],
      // What the worker must read from it: each record with its payload as today's code unpacks it.
      expect: {
        jobId: firstChunk,
        batchId: chunked.batchId,
        records: readJob(chunkJob!.data, firstChunk, ORDERS.payloadCodec).chunk.records,
      },
    };
    // Each gift order's job id, by order key.
    const singles = new Map(
      (await queue.getJobs(['wait'], 0, 100))
        .filter((job) => job.data.batchId === single.batchId)
        .map((job) => [job.data.records[0]!.key, job.id!] as const),
    );
    const singleKeys = [...singles.keys()].sort();

    // A chunk reserved and never queued (its importer died): the job the ledger keeps, built by RESERVE_CHUNK.
    const keptBatch = 'b-20261125T180000-fixtur';
    await batches.create({
      id: keptBatch,
      file: join(SAMPLES, 'multi-line-orders.csv'),
      sha256: '0'.repeat(64),
      env: 'acceptance',
      startedAt: 1_764_093_600_000,
      columns: ['orderRef'],
    });
    const source = await ORDERS.openSource(join(SAMPLES, 'multi-line-orders.csv'), {});
    const kept: ValidRecord<OrderPayload>[] = [];
    // Other keys than the imported ones (a reservation of its own), the same content.
    for await (const item of source.items())
      if (item.kind === 'valid' && kept.length < 3) kept.push({ ...item, key: `kept-${item.key}` });
    const keptChunk = chunkJobId(keptBatch, 1);
    const keptRecords = kept.map((order) => toChunkRecord(order, source.columns, ORDERS));
    await ledger.reserveChunks(
      [
        kept.map((order, i) => ({
          orderKey: order.key,
          fingerprint: fingerprintOf(order.payload),
          record: keptRecords[i],
        })),
      ],
      [keptChunk],
      { name: ORDERS.jobName, layout: ORDERS.payloadCodec!.version },
      { batchId: keptBatch },
    );
    dumps['kept-chunk-job'] = {
      about:
        'a chunk job the ledger keeps between reservation and confirm (unqueued-jobs hash, built by string concatenation in Lua)',
      keys: [
        await dumpKey(redis, keys.unqueuedJobs),
        await dumpKey(redis, keys.unqueued),
        ...(await Promise.all(kept.map((order) => dumpKey(redis, keys.ledger(order.key))))),
      ],
      expect: {
        chunkId: keptChunk,
        keys: kept.map((order) => order.key),
        payloads: kept.map((order) => order.payload),
      },
    };

    // Three gift orders, settled delivered, dead and held as a worker would.
    const [deliveredId, deadId, heldId] = singleKeys.slice(1, 4) as [string, string, string];
    const jobData = async (key: string): Promise<DeliveryRecord<OrderPayload>> => {
      const { chunk } = readJob((await queue.getJob(singles.get(key)!))!.data, singles.get(key)!, ORDERS.payloadCodec);
      return recordOfChunk(chunk, chunk.records[0]!);
    };
    const batchFile = await batches.file(single.batchId);
    const settle = async (
      key: string,
      state: 'delivered' | 'dead' | 'held',
      extra: Record<string, unknown>,
    ): Promise<void> => {
      const claim = await ledger.claimMany([key], `token-${key}`, singles.get(key)!);
      const outcome = claim.outcome === 'wait' ? 'wait' : claim.records[0]!.outcome;
      if (outcome !== 'claimed') throw new Error(`claim of ${key}: ${outcome}`);
      await ledger.settleMany([{ orderKey: key, batchId: single.batchId, token: `token-${key}`, state, ...extra }]);
    };
    await settle(deliveredId, 'delivered', { remoteId: 'R-100001', httpStatus: 201 });
    dumps['ledger-entry'] = {
      about: "a delivered order's ledger entry (hash)",
      keys: [await dumpKey(redis, keys.ledger(deliveredId))],
      expect: { orderKey: deliveredId, entry: await ledger.get(deliveredId) },
    };
    const deadFacts = {
      reason: 'the API refused the order (400 UNKNOWN_PRODUCT)',
      httpStatus: 400,
      code: 'UNKNOWN_PRODUCT',
      message: 'Product 5001 is unknown',
      body: { code: 'UNKNOWN_PRODUCT', message: 'Product 5001 is unknown' },
      bodyTruncated: false,
    };
    const dead = parkedRecord(await jobData(deadId), batchFile, { kind: 'dead', facts: deadFacts, attempts: 1 });
    await settle(deadId, 'dead', {
      httpStatus: 400,
      code: 'UNKNOWN_PRODUCT',
      message: 'Product 5001 is unknown',
      parkedRecord: dead,
    });
    dumps['dead-letter'] = {
      about: 'a dead letter: its record (JSON string), the index and its ledger entry',
      keys: [
        await dumpKey(redis, keys.parked('dead', deadId)),
        await dumpKey(redis, keys.parkedIndex('dead')),
        await dumpKey(redis, keys.ledger(deadId)),
      ],
      expect: { orderKey: deadId, record: JSON.parse((await redis.get(keys.parked('dead', deadId)))!) as unknown },
    };
    const heldFacts = {
      reason: 'sent without an answer (socket closed after the request was written): it may have been stored',
    };
    const held = parkedRecord(await jobData(heldId), batchFile, { kind: 'held', facts: heldFacts, attempts: 2 });
    await settle(heldId, 'held', { parkedRecord: held });
    dumps['held-record'] = {
      about: 'a record held for review: its record (JSON string), the index and its ledger entry',
      keys: [
        await dumpKey(redis, keys.parked('held', heldId)),
        await dumpKey(redis, keys.parkedIndex('held')),
        await dumpKey(redis, keys.ledger(heldId)),
      ],
      expect: { orderKey: heldId, record: JSON.parse((await redis.get(keys.parked('held', heldId)))!) as unknown },
    };

    dumps['batch'] = {
      about: 'a batch record (hash) and the batch index',
      keys: [await dumpKey(redis, keys.batch(single.batchId)), await dumpKey(redis, keys.batchIndex)],
      expect: { batchId: single.batchId, batch: await batches.get(single.batchId) },
    };

    // The dead letter sent again (`dead-letters retry`): a chunk of one order in a batch of its own, naming
    // its file and cells. Its import's job is gone first, as BullMQ removes a job that ended.
    await queue.remove(singles.get(deadId)!);
    const [deadItem] = await new ParkedStore(redis, keys, ledger, 'dead').select();
    const [retried] = await retryDeadLetters([deadItem!], deps);
    const requeued = (await queue.getJobs(['wait'], 0, 100)).find((job) => job.data.batchId === retried!.batchId)!;
    dumps['requeued-job'] = {
      about: 'an order sent again by `dead-letters retry`: its chunk of one (its file and cells), entry and batch',
      keys: [
        await dumpKey(redis, keys.job(ORDERS_QUEUE, requeued.id!)),
        await dumpKey(redis, keys.ledger(deadId)),
        await dumpKey(redis, keys.batch(retried!.batchId)),
      ],
      expect: { jobId: requeued.id, batchId: retried!.batchId, orderKey: deadId, data: requeued.data },
    };

    dumps['queued-jobs'] = await queuedJobs(redis, queuedPrefix, deps);

    // A schedule: a BullMQ job scheduler on the schedules queue (and the delayed job of its next firing).
    const scheduleQueue = new Queue<ScheduledImportData>(SCHEDULES_QUEUE, { connection: redis, prefix });
    const schedules = new ScheduleStore(scheduleQueue);
    await schedules.set({
      name: 'nightly',
      cron: '0 2 * * *',
      tz: 'Europe/Amsterdam',
      source: '/srv/bulkorder/inbox/*.csv',
      ingest: { delimiter: ';' },
    });
    // BullMQ's event stream is a log, not state.
    const scheduleKeys = (await scanKeys(redis, `${prefix}:${SCHEDULES_QUEUE}:*`))
      .filter((key) => !key.endsWith(':events'))
      .sort();
    const scheduleInfo = await schedules.get('nightly');
    dumps['schedule'] = {
      about: 'a schedule: every key of the schedules queue after `schedule set`',
      keys: await Promise.all(scheduleKeys.map((key) => dumpKey(redis, key))),
      expect: { name: 'nightly', cron: scheduleInfo!.cron, tz: scheduleInfo!.tz, source: scheduleInfo!.source },
    };
    await scheduleQueue.close();

    // The breaker opened by refusals of many orders (the state hash the workers share).
    const settings = {
      windowMs: 60_000,
      minAttempts: 20,
      minOrders: 10,
      minCustomers: 3,
      minBatches: 2,
      refusalRatio: 0.9,
      serverFailingRatio: 0.5,
      unreachableRatio: 0.5,
      credentialsMinAttempts: 3,
      openMs: 30_000,
      maxOpenMs: 600_000,
      trialCalls: 3,
      alertAfterMs: 1_800_000,
    };
    const breaker = new CircuitBreaker(redis, keys, logger, {
      settings,
      pauseQueue: async () => undefined,
      resumeQueue: async () => undefined,
    });
    for (let i = 0; i < 25; i++)
      await breaker.record(
        {
          kind: 'permanent',
          status: 403,
          code: 'UNKNOWN_CUSTOMER',
          message: 'UNKNOWN_CUSTOMER',
          body: { code: 'UNKNOWN_CUSTOMER' },
          bodyTruncated: false,
        },
        `order-${i % 12}`,
      );
    const status = await breaker.status();
    dumps['breaker-state'] = {
      about: "the circuit breaker's state hash, open",
      keys: [await dumpKey(redis, keys.breaker)],
      expect: { state: status.state, reason: status.reason },
    };

    await mkdir(out, { recursive: true });
    for (const [name, dump] of Object.entries(dumps)) {
      const text = JSON.stringify(
        {
          shape: name,
          about: dump.about,
          writtenBy: 'test/compat/writeFixtures.ts',
          keys: dump.keys,
          expect: dump.expect,
        },
        null,
        2,
      );
      await writeFile(join(out, `${name}.json`), placeholders(text, dump.prefix ?? prefix) + '\n');
    }
    process.stdout.write(`wrote ${Object.keys(dumps).length} fixtures to ${out}\n`);
  } finally {
    await queue.close();
    await deletePrefix(redis, prefix);
    await deletePrefix(redis, queuedPrefix);
    redis.disconnect();
  }
}

/**
 * Every key of a namespace whose jobs wait for a worker, as this version's import and requeues left
 * them (BullMQ's event stream aside: a log, not state): what a worker of the next version finds
 * during a rolling upgrade, and must deliver exactly once. gift-orders.csv one order to a job,
 * multi-line-orders.csv ten to a job, one gift order dead-lettered and sent again by `dead-letters
 * retry` (a batch of its own) and one by the breaker's burst (back into its own batch).
 */
async function queuedJobs(
  redis: ReturnType<typeof testRedis>,
  prefix: string,
  shared: {
    env: string;
    logger: ReturnType<typeof createLogger>;
    jobOptions: { attempts: number; backoff: { type: string } };
  },
): Promise<{ about: string; keys: StoredKey[]; expect: unknown; prefix: string }> {
  const keys = keyspace(prefix);
  const queue = new Queue<ChunkJobData<OrderPayload>>(ORDERS_QUEUE, { connection: redis, prefix });
  try {
    const ledger = new Ledger(redis, keys, { queueName: ORDERS_QUEUE });
    const batches = new BatchStore(redis, keys, 90 * 24 * 3600_000);
    const deps = { ...shared, queue, ledger, batches, kind: ORDERS };
    const single = await importFile(
      join(SAMPLES, 'gift-orders.csv'),
      { rejectsPath: '/dev/null' },
      { ...deps, ordersPerJob: 1 },
    );
    const chunked = await importFile(
      join(SAMPLES, 'multi-line-orders.csv'),
      { rejectsPath: '/dev/null' },
      { ...deps, ordersPerJob: 10 },
    );
    const jobs = await queue.getJobs(['wait'], 0, 1000);
    // The gift orders' job ids, by order key.
    const singles = new Map(
      jobs
        .filter((job) => job.data.batchId === single.batchId)
        .map((job) => [job.data.records[0]!.key, job.id!] as const),
    );
    const orderKeys = jobs.flatMap((job) => job.data.records.map((record) => record.key)).sort();
    // Two gift orders dead-lettered as a worker would (their jobs gone), then sent again.
    const batchFile = await batches.file(single.batchId);
    const refuse = async (key: string): Promise<void> => {
      const jobId = singles.get(key)!;
      const { chunk } = readJob((await queue.getJob(jobId))!.data, jobId, ORDERS.payloadCodec);
      await queue.remove(jobId);
      const claim = await ledger.claimMany([key], `token-${key}`, jobId);
      if (claim.outcome === 'wait' || claim.records[0]!.outcome !== 'claimed') throw new Error(`claim of ${key}`);
      const facts = {
        reason: 'the API refused the order (400 PRODUCT_UNAVAILABLE)',
        httpStatus: 400,
        code: 'PRODUCT_UNAVAILABLE',
        message: 'Product is unavailable',
      };
      await ledger.settleMany([
        {
          orderKey: key,
          batchId: single.batchId,
          token: `token-${key}`,
          state: 'dead',
          httpStatus: 400,
          code: 'PRODUCT_UNAVAILABLE',
          message: 'Product is unavailable',
          parkedRecord: parkedRecord(recordOfChunk(chunk, chunk.records[0]!), batchFile, {
            kind: 'dead',
            facts,
            attempts: 1,
          }),
        },
      ]);
    };
    const [retriedKey, burstKey] = [...singles.keys()].sort().slice(0, 2) as [string, string];
    await refuse(retriedKey);
    await refuse(burstKey);
    const retried = await retryDeadLetters([(await new ParkedStore(redis, keys, ledger, 'dead').get(retriedKey))!], {
      ...deps,
      kind: ORDERS,
    });
    const burst = await requeueBurst([burstKey], {
      redis,
      keys,
      ledger,
      queue,
      jobName: ORDERS.jobName,
      jobOptions: shared.jobOptions,
    });
    if (burst !== 1) throw new Error(`the burst requeued ${burst}`);
    const stored = (await scanKeys(redis, `${prefix}:*`)).filter((key) => !key.endsWith(':events')).sort();
    return {
      about:
        'every key of a namespace whose jobs wait for a worker: jobs of one order (an import at one order per job, `dead-letters retry`, the breaker burst) and chunk jobs, with their ledger entries and batches',
      keys: await Promise.all(stored.map((key) => dumpKey(redis, key))),
      expect: {
        orderKeys,
        batchIds: [single.batchId, chunked.batchId, retried[0]!.batchId].sort(),
        requeued: { retried: retriedKey, burst: burstKey },
      },
      prefix,
    };
  } finally {
    await queue.close();
  }
}

/** The dump's text with the run's prefix and this checkout's samples folder made placeholders. */
function placeholders(text: string, prefix: string): string {
  return text.replaceAll(prefix, '{prefix}').replaceAll(SAMPLES, FILE_PLACEHOLDER);
}

async function scanKeys(redis: ReturnType<typeof testRedis>, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', '1000');
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

async function dumpKey(redis: ReturnType<typeof testRedis>, key: string): Promise<StoredKey> {
  const type = (await redis.type(key)) as StoredKey['type'] | 'none';
  switch (type) {
    case 'string':
      return { key, type, value: await redis.get(key) };
    case 'hash':
      return { key, type, value: await redis.hgetall(key) };
    case 'zset': {
      const flat = await redis.zrange(key, '0', '-1', 'WITHSCORES');
      const pairs: [string, string][] = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
      return { key, type, value: pairs };
    }
    case 'set':
      return { key, type, value: (await redis.smembers(key)).sort() };
    case 'list':
      return { key, type, value: await redis.lrange(key, 0, -1) };
    default:
      throw new Error(`${key}: type ${type} is not dumped`);
  }
}

await main();
