import type { Job } from 'bullmq';
import type { Keyspace } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';
import type { RedisClient } from '../redis.js';

/**
 * Why a job rests for its batch: its file is still read (batchGate's `read`), or its batch's circuit
 * keeps it back (`judged`: the canary judges the batch, or the batch is held).
 */
export type BatchWait = 'read' | 'judged';

/**
 * What a batch shows a chunk it kept back: whether it still waits for its file (read, or read but
 * fewer than a canary queued: batchGate-4.lua's `read`), and its circuit's state (none: not started).
 */
export interface BatchView {
  reading: boolean;
  state: string | undefined;
}

/**
 * The batch's view (readBatchView), with the gate's rule for `read` (stillRead in
 * src/lua/includes/batchImport.lua, which batchGate-4.lua asks): an importing batch goes once its read
 * has ended (`readAt`) and `canaryOrders` of it are queued. One HMGET and one HGET sent together.
 */
export async function readBatchView(
  redis: RedisClient,
  keys: Keyspace,
  batchId: string,
  canaryOrders: number,
): Promise<BatchView> {
  const [[importState, readAt, enqueued], state] = await Promise.all([
    redis.hmget(keys.batch(batchId), 'importState', 'readAt', 'enqueued'),
    redis.hget(keys.batchCircuit(batchId), 'state'),
  ]);
  const reading = importState === 'importing' && (readAt === null || Number(enqueued ?? 0) < canaryOrders);
  return { reading, state: state ?? undefined };
}

/**
 * What a chunk kept back by its batch (`wait`: its file read, or its circuit judging or holding it)
 * does on seeing `view`: `go` (ask the gate again now), `wait` (its batch still keeps it back), or
 * `rest` (held: its chunks rest delayed until near the batch's probe). The one judgement of both a
 * put-back job's look (wakeIfFree) and a chunk waiting in place (src/worker/batchWaits.ts).
 */
export function waitVerdict(view: BatchView, wait: BatchWait): 'go' | 'wait' | 'rest' {
  if (view.reading) return 'wait';
  // The read is over: a chunk kept back for it asks the gate again (which may keep it back for the canary).
  if (wait === 'read') return 'go';
  if (view.state === undefined || view.state === 'canary') return 'wait';
  return view.state === 'held' ? 'rest' : 'go';
}

/**
 * What a worker's put-back needs: noting the job in its batch's set, dropping it once the job
 * completed, and whether its batch still keeps it back (a job put back for that is woken once it does not).
 */
export interface PutBackNotes {
  note(batchId: string, jobId: string): Promise<void>;
  drop(batchId: string, jobIds: readonly string[]): Promise<void>;
  holdsBack(batchId: string, wait: BatchWait): Promise<boolean>;
}

/**
 * Each batch's chunk jobs that a worker put back to rest delayed (its file still read, its canary
 * judged, the batch held, a 429, the breaker): a set per batch (`batchPutBack`), kept as long as
 * the batch. Waking a batch reads its own set, so its cost is that batch's put-back jobs, not
 * every job BullMQ holds delayed. An id leaves once its job is promoted, gone or completed.
 */
export class PutBackChunks implements PutBackNotes {
  /**
   * `canaryOrders`: the workers' canary (batchGate's rule for a batch read but still queued); without it
   * a batch is taken to keep its jobs back until its import has ended (a look that wakes nothing early).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    private readonly canaryOrders = Number.POSITIVE_INFINITY,
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

  /** Whether the batch still keeps back a job put back for `wait` (waitVerdict on its view: one round trip). */
  async holdsBack(batchId: string, wait: BatchWait): Promise<boolean> {
    return waitVerdict(await readBatchView(this.redis, this.keys, batchId, this.canaryOrders), wait) !== 'go';
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
 * A job just put back because its batch kept it back (`wait`: its file still read, or its circuit
 * judging or holding it): promoted now if that is over meanwhile. The wake that ends it (the
 * import's at the end of its read, a passed canary's, a resumed or released batch's) promotes the
 * jobs it finds noted and resting; one whose worker asked the gate before that end but noted it or
 * moved it to delayed after the wake looked would otherwise rest its whole wait (1.5-2.5 s) for
 * nothing. Either this look sees the batch still keeping it back (then the job was noted and resting
 * before the end, and the wake finds it), or it sees that over and promotes the job itself.
 */
export async function wakeIfFree(
  job: Pick<Job, 'data' | 'promote'>,
  notes: PutBackNotes | undefined,
  wait: BatchWait,
): Promise<void> {
  const batchId = batchIdOf(job.data);
  if (notes === undefined || batchId === undefined || (await notes.holdsBack(batchId, wait))) return;
  // Promoted by the wake, or taken, meanwhile: nothing left to do.
  await job.promote().catch(() => undefined);
}

/** The batch a job's data names, if any (a job this release cannot read may name none). */
function batchIdOf(data: unknown): string | undefined {
  const batchId = (data as { batchId?: unknown } | null | undefined)?.batchId;
  return typeof batchId === 'string' && batchId !== '' ? batchId : undefined;
}
