import type { JobsOptions, Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ChunkJobData, ParkedRecord } from '../deliveryJob.js';
import { requeuedChunk } from '../ledger/jobData.js';
import { requeueChunkId } from '../queues.js';

export interface RequeueBurstDeps<P> {
  redis: RedisClient;
  keys: Keyspace;
  ledger: Ledger;
  queue: Queue<ChunkJobData<P>>;
  /** The job name and options an import gives (RecordKind.jobName, services.jobOptions). */
  jobName: string;
  jobOptions: JobsOptions;
}

/**
 * Sends back to the queue, in their own batches, the orders that refusals of a breaker's burst
 * dead-lettered, each in a chunk of one: the same reservation `dead-letters retry` makes (the
 * ledger's reserveChunk.lua turns a dead key queued, keeping its job until confirmed queued;
 * delivered, held or queued keys are left alone), but into the order's own batch, whose dead count
 * goes down again in the same script (`alreadyCounted`), so `import --wait` of that file follows them
 * to the end; that batch counted them queued already, so the confirmation does not count them again.
 * A crash between reserving and adding is finished by a reconciler. The dead letter stays listed
 * until the order is delivered (the delivered settle removes it) or is replaced if it is refused
 * again. Returns how many went back.
 */
export async function requeueBurst<P>(orderKeys: readonly string[], deps: RequeueBurstDeps<P>): Promise<number> {
  const json =
    orderKeys.length === 0 ? [] : await deps.redis.mget(orderKeys.map((key) => deps.keys.parked('dead', key)));
  const byBatch = new Map<string, ParkedRecord<P>[]>();
  for (const text of json) {
    if (text === null) continue;
    const record = JSON.parse(text) as ParkedRecord<P>;
    byBatch.set(record.batchId, [...(byBatch.get(record.batchId) ?? []), record]);
  }
  let requeued = 0;
  for (const [batchId, records] of byBatch) {
    const candidates = records.map((record) => ({ id: requeueChunkId(batchId), data: requeuedChunk(record, batchId) }));
    const reserved = await deps.ledger.reserveRequeued(
      candidates,
      { name: deps.jobName, alreadyCounted: true },
      batchId,
    );
    const jobs = candidates
      .filter((_, i) => reserved[i]?.outcome === 'reserved')
      .map(({ id, data }) => ({ name: deps.jobName, data, opts: { ...deps.jobOptions, jobId: id } }));
    if (jobs.length === 0) continue;
    await deps.queue.addBulk(jobs);
    await deps.ledger.confirmChunks(
      jobs.map((job) => ({ chunkId: job.opts.jobId, orderKeys: job.data.records.map((record) => record.key) })),
      batchId,
    );
    requeued += jobs.length;
  }
  return requeued;
}
