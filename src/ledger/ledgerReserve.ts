/**
 * Reserving orders for a batch and confirming their jobs queued (src/lua/scripts/reserve-5.lua,
 * reserveChunk.lua, confirm-4.lua, confirmChunk.lua, dropStranded.lua), and reading what a
 * crashed importer left reserved. The Ledger class's methods of the same names call these.
 */
import { argv } from '../lua/scriptArgv.js';
import { keptChunkFrame } from './jobData.js';
import type {
  ChunkReservation,
  LedgerScope,
  LedgerState,
  Reservation,
  ReserveResult,
  StrandedEntry,
} from './ledgerTypes.js';

/** Ledger.reserveJobs: each record into a job of its own, its job kept until confirmed; one round trip. */
export async function reserveJobs(
  scope: LedgerScope,
  items: readonly Reservation[],
  batchId: string,
  force: boolean,
): Promise<ReserveResult[]> {
  if (items.length === 0) return [];
  const { keys } = scope;
  const now = Date.now();
  const pipeline = scope.redis.pipeline();
  for (const item of items) {
    pipeline.bulkorderReserve(
      keys.ledger(item.orderKey),
      keys.job(scope.queueName, item.orderKey),
      keys.unqueued,
      keys.unqueuedJobs,
      keys.batch(batchId),
      ...argv('reserve', {
        batchId,
        now,
        retentionMs: scope.retentionMs,
        force: force ? '1' : '0',
        staleMs: scope.staleQueuedMs,
        fingerprint: item.fingerprint?.hash ?? '',
        fingerprintParts: item.fingerprint?.parts ?? '',
        jobJson: JSON.stringify(item.job),
        orderKey: item.orderKey,
        alreadyCounted: item.alreadyCounted === true ? '1' : '0',
        jobPrefix: scope.jobPrefix,
      }),
    );
  }
  const replies = (await pipeline.exec()) ?? [];
  return replies.map(([error, reply]): ReserveResult => {
    if (error) throw error;
    return toReserveResult(reply as string[], 0);
  });
}

/** Ledger.reserveChunks: each chunk's records into one job (`chunkIds[i]`, `job.name`, `job.layout`), kept until confirmed; one round trip. */
export async function reserveChunks(
  scope: LedgerScope,
  chunks: readonly (readonly ChunkReservation[])[],
  chunkIds: readonly string[],
  job: { name: string; layout: number | undefined },
  batchId: string,
  force: boolean,
): Promise<ReserveResult[][]> {
  if (chunks.length === 0) return [];
  const { keys } = scope;
  const now = Date.now();
  const pipeline = scope.redis.pipeline();
  // The kept job is chunkJob's JSON with the reserved records spliced in by the script.
  const { head, tail } = keptChunkFrame(job.name, batchId, job.layout);
  for (const [c, items] of chunks.entries()) {
    // KEYS then ARGV of reserveChunk.lua in one array, filled in place (no per-record arrays).
    const args: (string | number)[] = [keys.unqueued, keys.unqueuedJobs, keys.batch(batchId)];
    for (const item of items) args.push(keys.ledger(item.orderKey));
    args.push(
      batchId,
      now,
      scope.retentionMs,
      force ? '1' : '0',
      scope.staleQueuedMs,
      scope.jobPrefix,
      chunkIds[c]!,
      head,
      tail,
      chunkNumber(chunkIds[c]!, batchId),
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
    return chunks[c]!.map((_, i) => toReserveResult(reply as string[], 5 * i));
  });
}

/** Ledger.confirmChunks: drops the chunks' kept jobs and counts each record once. Returns how many it counted. */
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
      chunkNumber(chunk.chunkId, batchId),
    );
  }
  return sumOf((await pipeline.exec()) ?? []);
}

/** Ledger.confirmQueued: drops the kept jobs of these keys and counts each order once. Returns how many it counted. */
export async function confirmQueued(
  scope: LedgerScope,
  orderKeys: readonly string[],
  batchId: string,
): Promise<number> {
  if (orderKeys.length === 0) return 0;
  const { keys } = scope;
  const pipeline = scope.redis.pipeline();
  for (const key of orderKeys)
    pipeline.bulkorderConfirm(keys.ledger(key), keys.batch(batchId), keys.unqueued, keys.unqueuedJobs, batchId, key);
  return sumOf((await pipeline.exec()) ?? []);
}

/** Ledger.stranded: up to `limit` reservations made before `before` (ms) whose job is not known to be queued. */
export async function stranded(scope: LedgerScope, before: number, limit: number): Promise<StrandedEntry[]> {
  const { keys } = scope;
  const orderKeys = await scope.redis.zrangebyscore(keys.unqueued, '-inf', before, 'LIMIT', 0, limit);
  if (orderKeys.length === 0) return [];
  const pipeline = scope.redis.pipeline();
  for (const key of orderKeys) {
    // `j`: a job kept in the entry itself (entries written before unqueuedJobs).
    pipeline.hmget(keys.ledger(key), 's', 'b', 'j');
    pipeline.hget(keys.unqueuedJobs, key);
    pipeline.exists(keys.job(scope.queueName, key));
  }
  const replies = (await pipeline.exec()) ?? [];
  return orderKeys.map((orderKey, i) => {
    const [error, fields] = replies[3 * i]!;
    const [keptError, kept] = replies[3 * i + 1]!;
    const [jobError, exists] = replies[3 * i + 2]!;
    const failed = error ?? keptError ?? jobError;
    if (failed) throw failed;
    const [s, b, j] = fields as (string | null)[];
    const job = (kept as string | null) ?? j ?? undefined;
    const chunk = s === null && job !== undefined ? chunkOf(job) : undefined;
    // A chunk's job id has no entry of its own: the chunk stands for its records, queued by its batch.
    if (chunk !== undefined)
      return {
        orderKey,
        state: 'queued',
        batchId: chunk.batchId,
        job,
        jobExists: Number(exists) === 1,
        chunkKeys: chunk.keys,
      };
    return {
      orderKey,
      state: (s ?? undefined) as LedgerState | undefined,
      batchId: b ?? '',
      job,
      jobExists: Number(exists) === 1,
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
function chunkNumber(chunkId: string, batchId: string): string {
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
  return { outcome: outcome as 'delivered' | 'held' | 'queued', batchId: previousBatch };
}

/** The batch and record keys of a kept chunk job ({name, data: {batchId, records}} JSON); undefined for a job of one record. */
function chunkOf(job: string): { batchId: string; keys: string[] } | undefined {
  const data = (JSON.parse(job) as { data?: { batchId?: string; records?: { key: string }[] } }).data;
  return data?.records === undefined
    ? undefined
    : { batchId: data.batchId ?? '', keys: data.records.map((record) => record.key) };
}
