import type { Job } from 'bullmq';
import type { Keyspace } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';
import type { RedisClient } from '../redis.js';

/**
 * What a worker's put-back needs: noting the job in its batch's set, dropping it once the job
 * completed, and whether the batch's file is still read (a job put back for that is woken once it is not).
 */
export interface PutBackNotes {
  note(batchId: string, jobId: string): Promise<void>;
  drop(batchId: string, jobIds: readonly string[]): Promise<void>;
  stillRead(batchId: string): Promise<boolean>;
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

  /** Whether the batch's import still reads its file (importState `importing`; one HGET). */
  async stillRead(batchId: string): Promise<boolean> {
    return (await this.redis.hget(this.keys.batch(batchId), 'importState')) === 'importing';
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

/**
 * A job just put back because its batch's file was still read (batchGate's `read`): promoted now if
 * the read has ended meanwhile. The import's wake (at the end of its read) promotes the jobs it finds
 * noted and resting; one whose worker asked the gate before the read ended but noted it or moved it to
 * delayed after the wake looked would otherwise rest its whole wait (1.5-2.5 s) for nothing. Either
 * this look sees the read still going (then the job was noted and resting before the read ended, and
 * the wake finds it), or it sees it ended and promotes the job itself.
 */
export async function wakeIfRead(job: Pick<Job, 'data' | 'promote'>, notes: PutBackNotes | undefined): Promise<void> {
  const batchId = batchIdOf(job.data);
  if (notes === undefined || batchId === undefined || (await notes.stillRead(batchId))) return;
  // Promoted by the wake, or taken, meanwhile: nothing left to do.
  await job.promote().catch(() => undefined);
}

/** The batch a job's data names, if any (a job this release cannot read may name none). */
function batchIdOf(data: unknown): string | undefined {
  const batchId = (data as { batchId?: unknown } | null | undefined)?.batchId;
  return typeof batchId === 'string' && batchId !== '' ? batchId : undefined;
}
