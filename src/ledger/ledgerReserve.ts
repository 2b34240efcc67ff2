/**
 * Reserving records for a batch into chunk jobs and confirming the jobs queued
 * (src/lua/scripts/reserveChunk.lua, confirmChunk.lua, dropStranded.lua), and reading what a
 * crashed importer left reserved. The Ledger class's methods of the same names call these.
 */
import type { ChunkJobData } from '../deliveryJob.js';
import { keptChunkFrame } from './jobData.js';
import type {
  ChunkJobs,
  LedgerScope,
  LedgerState,
  ReserveChunksRequest,
  ReserveResult,
  StrandedEntry,
} from './ledgerTypes.js';
import { REDIS_TIME } from '../redis/redisClock.js';
import { defined } from '../errors.js';

/** Ledger.reserveChunks: each chunk's records into one job (`chunkIds[i]`, described by `jobs`), kept until confirmed; one round trip. */
export async function reserveChunks(scope: LedgerScope, request: ReserveChunksRequest): Promise<ReserveResult[][]> {
  const { chunks, chunkIds, jobs, batchId, force = false, retryRefused = false } = request;
  if (chunks.length === 0) return [];
  const { keys } = scope;
  const pipeline = scope.redis.pipeline();
  // The kept job is chunkJob's JSON with the reserved records spliced in by the script.
  const { head, tail } = keptChunkFrame(jobs.name, batchId, jobs.layout, jobs.file);
  const alreadyCounted = jobs.alreadyCounted === true ? '1' : '0';
  for (const [c, items] of chunks.entries()) {
    const chunkId = defined(chunkIds[c], 'the id of a chunk (one per chunk)');
    // KEYS then ARGV of reserveChunk.lua in one array, filled in place (no per-record arrays).
    const args: (string | number)[] = [keys.unqueued, keys.unqueuedJobs, keys.batch(batchId)];
    for (const item of items) args.push(keys.ledger(item.orderKey));
    args.push(
      batchId,
      REDIS_TIME,
      scope.retentionMs,
      reserveMode(force, retryRefused),
      scope.staleQueuedMs,
      scope.jobPrefix,
      chunkId,
      head,
      tail,
      chunkNumber(chunkId, batchId),
      alreadyCounted,
    );
    for (const item of items)
      args.push(
        item.orderKey,
        item.fingerprint?.hash ?? '',
        item.fingerprint?.parts ?? '',
        JSON.stringify(item.record),
      );
    pipeline.bulkorderReserveChunk(3 + items.length, ...args);
  }
  const replies = (await pipeline.exec()) ?? [];
  return replies.map(([error, reply], c) => {
    if (error) throw error;
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- the pipeline has one reply per chunk, in order
    return chunks[c]!.map((_, i) => toReserveResult(reply as string[], 5 * i));
  });
}

/**
 * Ledger.reserveRequeued: chunks of one record sent again (jobData.ts requeuedChunk), each reserved
 * as reserveChunks reserves an import's, never compared by content; those of one file in one
 * round trip (a kept job names one file). Returns each chunk's result.
 */
export async function reserveRequeued(
  scope: LedgerScope,
  requeues: readonly { id: string; data: ChunkJobData<unknown> }[],
  jobs: Pick<ChunkJobs, 'name' | 'alreadyCounted'>,
  batchId: string,
): Promise<ReserveResult[]> {
  const results: ReserveResult[] = [];
  const byFile = new Map<string | undefined, number[]>();
  for (const [i, { data }] of requeues.entries()) {
    const at = byFile.get(data.file);
    if (at === undefined) byFile.set(data.file, [i]);
    else at.push(i);
  }
  for (const [file, at] of byFile) {
    const picked = at.map((i) => defined(requeues[i], 'a requeued chunk of this file'));
    const records = picked.map(({ data }) => defined(data.records[0], 'the record of a requeued chunk'));
    const reserved = await reserveChunks(scope, {
      chunks: records.map((record) => [{ orderKey: record.key, record }]),
      chunkIds: picked.map(({ id }) => id),
      jobs: { ...jobs, layout: undefined, ...(file === undefined ? {} : { file }) },
      batchId,
    });
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- reserveChunks returns one result per record of each chunk
    at.forEach((i, n) => (results[i] = reserved[n]![0]!));
  }
  return results;
}

/**
 * Ledger.confirmChunks: drops the chunks' kept jobs and counts each record once. Returns how many it
 * counted. A chunk whose id is its one record's key is an earlier release's job of one (its entry
 * names no chunk), reserved before an upgrade and confirmed by a reconciler after it.
 */
export async function confirmChunks(
  scope: LedgerScope,
  chunks: readonly { chunkId: string; orderKeys: readonly string[] }[],
  batchId: string,
): Promise<number> {
  if (chunks.length === 0) return 0;
  const { keys } = scope;
  const pipeline = scope.redis.pipeline();
  for (const chunk of chunks) {
    const entries = chunk.orderKeys.map((key) => keys.ledger(key));
    pipeline.bulkorderConfirmChunk(
      3 + entries.length,
      keys.batch(batchId),
      keys.unqueued,
      keys.unqueuedJobs,
      ...entries,
      batchId,
      chunk.chunkId,
      chunk.orderKeys.length === 1 && chunk.orderKeys[0] === chunk.chunkId ? '' : chunkNumber(chunk.chunkId, batchId),
    );
  }
  return sumOf((await pipeline.exec()) ?? []);
}

/** Ledger.stranded: up to `limit` reservations made before `before` (ms) whose job is not known to be queued. */
export async function stranded(scope: LedgerScope, before: number, limit: number): Promise<StrandedEntry[]> {
  const { keys } = scope;
  const members = await scope.redis.zrangebyscore(keys.unqueued, '-inf', before, 'LIMIT', 0, limit);
  if (members.length === 0) return [];
  const pipeline = scope.redis.pipeline();
  for (const key of members) {
    // `j`: a job kept in the entry itself (entries written before unqueuedJobs).
    pipeline.hmget(keys.ledger(key), 's', 'b', 'j');
    pipeline.hget(keys.unqueuedJobs, key);
    pipeline.exists(keys.job(scope.queueName, key));
  }
  const replies = (await pipeline.exec()) ?? [];
  return members.map((jobId, i): StrandedEntry => {
    /* eslint-disable @typescript-eslint/no-non-null-assertion -- the pipeline above queued three commands per member */
    const [error, fields] = replies[3 * i]!;
    const [keptError, kept] = replies[3 * i + 1]!;
    const [jobError, exists] = replies[3 * i + 2]!;
    /* eslint-enable @typescript-eslint/no-non-null-assertion */
    const failed = error ?? keptError ?? jobError;
    if (failed) throw failed;
    const [s, b, j] = fields as (string | null)[];
    const job = (kept as string | null) ?? j ?? undefined;
    const jobExists = Number(exists) === 1;
    const chunk = s === null && job !== undefined ? chunkOf(job) : undefined;
    // A chunk's job id has no entry of its own: the chunk stands for its records, queued by its batch.
    if (chunk !== undefined)
      return { jobId, state: 'queued', batchId: chunk.batchId, job, jobExists, chunkKeys: chunk.keys };
    // An earlier release's job of one record, its key as id (and the key's entry).
    return {
      jobId,
      state: (s ?? undefined) as LedgerState | undefined,
      batchId: b ?? '',
      job,
      jobExists,
      chunkKeys: [jobId],
    };
  });
}

/** Ledger.touchStranded: index members to the back (`score`), or dropped (undefined: nothing left to do). */
export async function touchStranded(
  scope: LedgerScope,
  orderKeys: readonly string[],
  score: number | undefined,
): Promise<void> {
  if (orderKeys.length === 0) return;
  const { keys } = scope;
  if (score === undefined)
    await scope.redis.bulkorderDropStranded(
      2 + orderKeys.length,
      keys.unqueued,
      keys.unqueuedJobs,
      ...orderKeys.map((key) => keys.ledger(key)),
      ...orderKeys,
    );
  else await scope.redis.zadd(keys.unqueued, 'XX', ...orderKeys.flatMap((key) => [score, key]));
}

function sumOf(replies: [Error | null, unknown][]): number {
  return replies.reduce((sum, [error, reply]) => {
    if (error) throw error;
    return sum + Number(reply);
  }, 0);
}

/** The number of a chunk job of `batchId` (its id is `<batchId>.<number>`, src/queues.ts chunkJobId): what its records' entries keep. */
export function chunkNumber(chunkId: string, batchId: string): string {
  const number = chunkId.startsWith(`${batchId}.`) ? chunkId.slice(batchId.length + 1) : '';
  if (number === '' || number.includes('.'))
    throw new Error(`chunk job id ${chunkId} is not <batch id>.<number> of batch ${batchId}`);
  return number;
}

/** A reserve reply (five values from `at`) as a ReserveResult. */
function toReserveResult(reply: readonly string[], at: number): ReserveResult {
  if (reply[at] === 'reserved') return { outcome: 'reserved' };
  const [outcome, previousBatch = '', parts = '', when = '0', state = ''] = reply.slice(at, at + 5);
  if (outcome === 'conflict')
    return { outcome, batchId: previousBatch, parts, at: Number(when), state: state as LedgerState };
  return { outcome: outcome as 'delivered' | 'held' | 'queued' | 'refused', batchId: previousBatch };
}

/** The batch and record keys of a kept chunk job ({name, data: {batchId, records}} JSON); undefined for an earlier release's job of one record. */
function chunkOf(job: string): { batchId: string; keys: string[] } | undefined {
  const data = (JSON.parse(job) as { data?: { batchId?: string; records?: { key: string }[] } }).data;
  return data?.records === undefined
    ? undefined
    : { batchId: data.batchId ?? '', keys: data.records.map((record) => record.key) };
}

/** reserveChunk.lua's mode argument: '1' forces a send, 'r' retries what was refused, '0' neither. */
function reserveMode(force: boolean, retryRefused: boolean): '1' | 'r' | '0' {
  if (force) return '1';
  return retryRefused ? 'r' : '0';
}
