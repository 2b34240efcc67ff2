import type { OrderPayload } from './ingest/types.js';

/**
 * The data of one delivery job of any record kind (orders; employee accounts: src/kinds/). The job id is the record's key, so BullMQ itself refuses a
 * second job for a record that is still queued; the ledger covers the time after.
 */
export interface DeliveryJobData<P = OrderPayload> {
  key: string;
  batchId: string;
  /**
   * The source file; absent when it is the batch's own (the batch record keeps it): an import
   * leaves it out, jobs that resend parked records of other files keep theirs.
   */
  file?: string;
  lines: number[];
  orderRef?: string;
  payload: P;
  /**
   * The order's original cells, in the batch's column order, so a dead letter can be exported as the
   * input was; left out when the kind rebuilds exactly these from the payload (RecordKind.rebuildRows).
   */
  cells?: string[][];
}

/** One record of a chunk job: a job of its own's data without what the chunk says once. */
export type ChunkRecord<P = OrderPayload> = Omit<DeliveryJobData<P>, 'batchId' | 'file'>;

/**
 * A chunk record as a chunk job's data holds it: its payload either as it is or, where the kind can
 * (RecordKind.payloadCodec), `packed` without field names.
 */
export type StoredChunkRecord<P = OrderPayload> = Omit<ChunkRecord<P>, 'payload'> & ({ payload: P; packed?: never } | { packed: unknown; payload?: never });

/** A chunk record with its payload, unpacked where it was packed. */
export function unpackedRecord<P>(record: StoredChunkRecord<P>, unpack: ((packed: unknown) => P) | undefined): ChunkRecord<P> {
  if (record.packed === undefined) return record as ChunkRecord<P>;
  if (unpack === undefined) throw new Error(`record ${record.key} has a packed payload and its kind no codec`);
  const { packed, ...rest } = record;
  return { ...rest, payload: unpack(packed) };
}

/**
 * The data of a chunk job: several records of one batch (an import's, BULKORDER_ORDERS_PER_JOB),
 * delivered by one BullMQ job. BullMQ's work is per job; each record keeps its own ledger entry,
 * claim, outcome and parked record. Its job id is `chunkJobId(batchId, n)`, and each record's
 * ledger entry names it (`q`) while the record is queued in it.
 */
export interface ChunkJobData<P = OrderPayload> {
  batchId: string;
  /** As DeliveryJobData's: absent when the batch's own. */
  file?: string;
  records: StoredChunkRecord<P>[];
}

/** Either kind of delivery job's data. */
export type AnyDeliveryJobData<P = OrderPayload> = DeliveryJobData<P> | ChunkJobData<P>;

export function isChunk<P>(data: AnyDeliveryJobData<P>): data is ChunkJobData<P> {
  return 'records' in data;
}

/** A record of a chunk as the data of a job of its own (what parking and logging take). */
export function recordOfChunk<P>(chunk: Pick<ChunkJobData<P>, 'batchId' | 'file'>, record: ChunkRecord<P>): DeliveryJobData<P> {
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
 * orphans of BullMQ's). `batchFile`: the file of the job's batch, for a job that names none.
 */
export function parkedRecord<P>(job: DeliveryJobData<P>, batchFile: string, kind: 'dead' | 'held', facts: ParkFacts, attempts: number): ParkedRecord<P> {
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

/** The job that sends a parked record again, into `batchId` (the inverse of parkedRecord): dead-letters retry, review release, the breaker's burst. */
export function requeuedJobData<P>(record: ParkedRecord<P>, batchId: string, cells: string[][] = record.cells): DeliveryJobData<P> {
  return {
    key: record.key,
    batchId,
    file: record.file,
    lines: record.lines,
    ...(record.orderRef === undefined ? {} : { orderRef: record.orderRef }),
    payload: record.payload,
    cells,
  };
}
