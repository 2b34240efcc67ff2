import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import type { DeliveryWorker } from '../../src/assembly/deliveryWorker.js';
import { createLogger } from '../../src/logger.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';

/**
 * A worker's log at info: one `chunk done` line per attempt of a chunk job, none per order (the
 * records' `delivered` lines are at debug). Read from the real log stream of a real worker.
 */
let rig: DeliveryRig | undefined;
let worker: DeliveryWorker<OrderPayload> | undefined;
afterEach(async () => {
  await worker?.close();
  worker = undefined;
  await rig?.close();
  rig = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

interface Line {
  msg: string;
  level: number;
  jobId?: string;
  records?: number;
  counts?: Record<string, number>;
  pending?: string;
  orderKey?: string;
}

async function deliverWithLog(name: string, level: 'info' | 'debug', orders: number): Promise<Line[]> {
  rig = await deliveryRig(name, {}, { BULKORDER_ORDERS_PER_JOB: '10' });
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level, destination });
  worker = await startBusinessDelivery(rig.config, logger, { prefix: rig.prefix, delivery: rig.config.delivery });
  const file = await rig.writeFile(`${name}.csv`, ordersCsv(name, orders));
  const imported = await rig.importFile(file);
  const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
    pollMs: 100,
    timeoutMs: 45_000,
    out: quiet,
  });
  expect(settled).toBe(true);
  expect(batch.delivered).toBe(orders);
  await worker.close();
  worker = undefined;
  return text
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

describe('the worker log of chunk jobs (real worker, Redis and simulator)', () => {
  it('at info: one `chunk done` line per chunk, counting its records, and no line per order', async () => {
    const lines = await deliverWithLog('chunklog', 'info', 45);
    const done = lines.filter((line) => line.msg === 'chunk done');
    // 45 orders at 10 per job: 5 chunk jobs. A chunk may run more than once (taken while the file is still read, or
    // while the batch's canary is judged, it is put back, `pending: unsent`): one line per run, each counting what
    // that run ended, and exactly one run per chunk that ends it.
    expect(new Set(done.map((line) => line.jobId)).size).toBe(5);
    const ending = done.filter((line) => line.pending === undefined);
    expect(ending).toHaveLength(5);
    expect(new Set(ending.map((line) => line.jobId)).size).toBe(5);
    expect(done.filter((line) => line.pending !== undefined && line.pending !== 'unsent')).toHaveLength(0);
    expect(done.every((line) => (line.records ?? 0) <= 10)).toBe(true);
    expect(done.reduce((sum, line) => sum + (line.counts?.delivered ?? 0), 0)).toBe(45);
    expect(lines.filter((line) => line.msg === 'delivered')).toHaveLength(0);
    expect(lines.filter((line) => line.orderKey !== undefined)).toHaveLength(0);
  }, 60_000);

  it('at debug: the per-order `delivered` lines are there, one per order', async () => {
    const lines = await deliverWithLog('orderlog', 'debug', 12);
    const delivered = lines.filter((line) => line.msg === 'delivered');
    expect(delivered).toHaveLength(12);
    expect(new Set(delivered.map((line) => line.orderKey)).size).toBe(12);
    const chunks = lines.filter((line) => line.msg === 'chunk done');
    expect(new Set(chunks.map((line) => line.jobId)).size).toBe(2);
  }, 60_000);
});
