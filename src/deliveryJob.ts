import type { OrderPayload } from './ingest/types.js';

/**
 * The version of the job data this code writes (`v` in every job; absent: 1, jobs queued before
 * it). 2: jobs say their version, and chunk jobs the layout of their packed payloads (`pk`). A
 * worker refuses a job of a higher version (JOB_DATA_NEWER) and reads every lower one.
 */
export const JOB_DATA_VERSION = 2;

/**
 * A kind's payload without field names, for chunk jobs (orders: src/ingest/orderShape.ts). The
 * layout it packs in has a version that each chunk job carries, so a job packed by an earlier
 * release is read in its own layout.
 */
export interface PayloadCodec<P> {
  /** The layout `pack` writes; undefined: this code's layout has no version, so nothing is packed. */
  readonly version: number | undefined;
  pack(payload: P): unknown;
  /**
   * `pack`'s output when `unpack` in `version` gives back exactly the payload (the same JSON text),
   * else undefined; without it the import checks by unpacking (src/ledger/jobData.ts toChunkRecord).
   */
  packExactly?(payload: P): unknown;
  /** The payload packed in layout `version`; throws JobDataError for an unknown layout or values that do not fit it. */
  unpack(packed: unknown, version: number): P;
}

/**
 * One record (an order, an employee account) of a delivery job: what it sends and what a dead
 * letter or held record of it keeps. Its key is its ledger entry's key and the API's Idempotency-Key.
 */
export interface ChunkRecord<P = OrderPayload> {
  key: string;
  lines: number[];
  orderRef?: string;
  payload: P;
  /**
   * The order's original cells, in the batch's column order, so a dead letter can be exported as the
   * input was; left out when the kind rebuilds exactly these from the payload (RecordKind.rebuildRows).
   */
  cells?: string[][];
}

/** A record of a chunk with what its chunk says once: its batch and, when not the batch's own, its file. */
export type DeliveryRecord<P = OrderPayload> = ChunkRecord<P> & {
  batchId: string;
  /**
   * The source file; absent when it is the batch's own (the batch record keeps it): an import
   * leaves it out, jobs that resend parked records of other files keep theirs.
   */
  file?: string;
};

/**
 * A chunk record as a chunk job's data holds it: its payload either as it is or, where the kind can
 * (RecordKind.payloadCodec), `packed` without field names.
 */
export type StoredChunkRecord<P = OrderPayload> = Omit<ChunkRecord<P>, 'payload'> &
  ({ payload: P; packed?: never } | { packed: unknown; payload?: never });

/**
 * The data of every delivery job: records of one batch (an import's, BULKORDER_ORDERS_PER_JOB of
 * them; a requeue's, one), delivered by one BullMQ job. BullMQ's work is per job; each record keeps
 * its own ledger entry, claim, outcome and parked record. Its job id is `chunkJobId(batchId, n)`,
 * and each record's ledger entry names it (`q`) while the record is queued in it. (Earlier
 * releases also queued jobs of one record, its key as job id: src/ledger/jobData.ts reads those as
 * chunks of one.)
 */
export interface ChunkJobData<P = OrderPayload> {
  /** JOB_DATA_VERSION of the code that wrote it; absent: 1. */
  v?: number;
  batchId: string;
  /** As DeliveryRecord's: absent when the batch's own. */
  file?: string;
  /** The layout (PayloadCodec.version) of its records' `packed` payloads; absent: 1. */
  pk?: number;
  /** Last, so the ledger can keep the job as a head, the records, a tail (src/ledger/jobData.ts keptChunkFrame). */
  records: StoredChunkRecord<P>[];
}

/** A record of a chunk with its chunk's batch and file (what parking and logging take). */
export function recordOfChunk<P>(
  chunk: Pick<ChunkJobData<P>, 'batchId' | 'file'>,
  record: ChunkRecord<P>,
): DeliveryRecord<P> {
  return { ...record, batchId: chunk.batchId, ...(chunk.file === undefined ? {} : { file: chunk.file }) };
}

/**
 * What is kept of a dead-lettered or held order (or account) until a person resolves or
 * purges it: the record, where it came from, and everything the API said.
 */
export interface ParkedRecord<P = OrderPayload> {
  kind: 'dead' | 'held';
  /** The record's key (an order key, an account key): its ledger entry and job id. */
  key: string;
  batchId: string;
  file: string;
  lines: number[];
  orderRef?: string;
  payload: P;
  cells: string[][];
  /** Why it is parked, in words a person can act on. */
  reason: string;
  httpStatus?: number;
  code?: string;
  message?: string;
  /** The API's error body (JSON when it was JSON), capped. */
  body?: unknown;
  bodyTruncated?: boolean;
  attempts: number;
  parkedAt: number;
}

/** What a parked record says about why it is parked (the rest comes from its job). */
export type ParkFacts = Pick<ParkedRecord, 'reason' | 'httpStatus' | 'code' | 'message' | 'body' | 'bodyTruncated'>;

/**
 * The parked record of a job's record: the one place its shape is filled in (the processor, and
 * orphans of BullMQ's). `batchFile`: the file of the job's batch, for a job that names none; `parked`: dead or held, why, after how many attempts.
 */
export function parkedRecord<P>(
  job: DeliveryRecord<P>,
  batchFile: string,
  parked: { kind: 'dead' | 'held'; facts: ParkFacts; attempts: number },
): ParkedRecord<P> {
  const { kind, facts, attempts } = parked;
  return {
    kind,
    key: job.key,
    batchId: job.batchId,
    file: job.file ?? batchFile,
    lines: job.lines,
    ...(job.orderRef === undefined ? {} : { orderRef: job.orderRef }),
    payload: job.payload,
    cells: job.cells ?? [],
    ...facts,
    attempts,
    parkedAt: Date.now(),
  };
}
