import type { Job } from 'bullmq';
import type { Keyspace } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';
import type { RedisClient } from '../redis.js';

/** What a worker's put-back needs: noting the job in its batch's set, and dropping it once the job completed. */
export interface PutBackNotes {
  note(batchId: string, jobId: string): Promise<void>;
  drop(batchId: string, jobIds: readonly string[]): Promise<void>;
}

/**
 * Each batch's chunk jobs that a worker put back to rest delayed (its file still read, its canary
 * judged, the batch held, a 429, the breaker): a set per batch (`batchPutBack`), kept as long as
 * the batch. Waking a batch reads its own set, so its cost is that batch's put-back jobs, not
 * every job BullMQ holds delayed. An id leaves once its job is promoted, gone or completed.
 */
export class PutBackChunks implements PutBackNotes {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
  ) {
    defineScripts(redis);
  }

  /** Notes a job about to be put back (notePutBack-2.lua); a batch already gone notes nothing. */
  async note(batchId: string, jobId: string): Promise<void> {
    await this.redis.bulkorderNotePutBack(this.keys.batch(batchId), this.keys.batchPutBack(batchId), jobId);
  }

  /** The batch's put-back job ids (one SMEMBERS: at most the batch's chunks). */
  read(batchId: string): Promise<string[]> {
    return this.redis.smembers(this.keys.batchPutBack(batchId));
  }

  async drop(batchId: string, jobIds: readonly string[]): Promise<void> {
    if (jobIds.length > 0) await this.redis.srem(this.keys.batchPutBack(batchId), ...jobIds);
  }
}

/**
 * Puts a chunk job a worker holds (its lock `token`) back to rest until `until` (ms, the worker's
 * Date.now(): Redis's clock, adoptClock), noted first in its batch's set: a wake that comes once it
 * rests finds it. The job then ends its run with BullMQ's DelayedError (the caller throws it).
 */
export async function putBackJob(
  job: Pick<Job, 'id' | 'data' | 'moveToDelayed'>,
  until: number,
  token: string | undefined,
  notes: PutBackNotes | undefined,
): Promise<void> {
  const batchId = batchIdOf(job.data);
  if (notes !== undefined && batchId !== undefined && job.id !== undefined) await notes.note(batchId, job.id);
  await job.moveToDelayed(until, token);
}

/** The batch a job's data names, if any (a job this release cannot read may name none). */
function batchIdOf(data: unknown): string | undefined {
  const batchId = (data as { batchId?: unknown } | null | undefined)?.batchId;
  return typeof batchId === 'string' && batchId !== '' ? batchId : undefined;
}
