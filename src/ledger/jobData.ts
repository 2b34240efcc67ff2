import {
  JOB_DATA_VERSION,
  type ChunkJobData,
  type ChunkRecord,
  type DeliveryRecord,
  type ParkedRecord,
  type PayloadCodec,
  type StoredChunkRecord,
} from '../deliveryJob.js';
import { JobDataError } from '../errors.js';
import type { ValidRecord } from '../ingest/types.js';

/**
 * The one place delivery job data is written and read. Every job is a chunk job (src/deliveryJob.ts)
 * and says its version (`v`) and the layout of its packed payloads (`pk`); the import, the ledger's
 * kept chunk jobs and the requeues all build their jobs here, and the worker reads them here (jobs
 * of one record that earlier releases queued as chunks of one), refusing what it cannot read
 * (JobDataError) rather than guessing fields. test/compat holds the shapes earlier versions wrote.
 */

/** What of a record kind building a job needs (RecordKind's `rebuildRows` and `payloadCodec`). */
export interface JobKind<P> {
  readonly rebuildRows?: {
    readonly columns: readonly string[];
    rows(payload: P, orderRef: string | undefined): string[][];
  };
  readonly payloadCodec?: PayloadCodec<P>;
}

/** A chunk job as it reads: its records with their payloads. */
export type UnpackedChunk<P> = Omit<ChunkJobData<P>, 'records'> & { records: ChunkRecord<P>[] };

/**
 * The data of a job of one record, as releases before chunks only queued it (`deliver-order`,
 * `register-account`; job data versions 1 and 2), its key as job id: read only, as a chunk of one.
 */
export type JobOfOneData<P> = DeliveryRecord<P> & { v?: number };

/** What a delivery queue may hold: chunk jobs, and jobs of one record queued by an earlier release. */
export type QueuedJobData<P> = ChunkJobData<P> | JobOfOneData<P>;

/** A delivery job as the worker reads it. */
export interface ReadJob<P> {
  chunk: UnpackedChunk<P>;
  /**
   * The id its records' ledger entries name it by (`<batch>.<q>`, claimOne's `chunkId`): the job's id;
   * '' for a job of one record of an earlier release, whose entry names no chunk.
   */
  chunkId: string;
}

/**
 * Reads any delivery job: a chunk job's records unpacked (readChunk), and a job of one record queued
 * by an earlier release (JobOfOneData) as a chunk of one, so a rolling upgrade delivers every job
 * queued before it. Throws JobDataError for a job this code cannot read; nothing is guessed.
 */
export function readJob<P>(data: QueuedJobData<P>, jobId: string, codec: PayloadCodec<P> | undefined): ReadJob<P> {
  if ('records' in data) return { chunk: readChunk(data, jobId, codec), chunkId: jobId };
  checkJobVersion(data, jobId);
  const { v, batchId, file, ...record } = data;
  const chunk: UnpackedChunk<P> = {
    ...(v === undefined ? {} : { v }),
    batchId,
    ...(file === undefined ? {} : { file }),
    records: [record],
  };
  return { chunk, chunkId: '' };
}

/**
 * The chunk of one that sends a parked record again, into `batchId` (the inverse of parkedRecord):
 * dead-letters retry, review release, the breaker's burst. It names the record's file (a requeue's
 * batch is not its file's) and keeps the cells it was parked with.
 */
export function requeuedChunk<P>(
  record: ParkedRecord<P>,
  batchId: string,
  cells: string[][] = record.cells,
): ChunkJobData<P> {
  const one: StoredChunkRecord<P> = {
    key: record.key,
    lines: record.lines,
    ...(record.orderRef === undefined ? {} : { orderRef: record.orderRef }),
    payload: record.payload,
    cells,
  };
  return chunkJob(batchId, [one], undefined, record.file);
}

/**
 * A valid record as one record of a chunk job (its batch and file are the chunk's), its payload
 * packed where the kind can (in the layout chunkJob names) and the packed form gives back exactly
 * the same payload.
 */
export function toChunkRecord<P>(
  order: ValidRecord<P>,
  columns: readonly string[],
  kind: JobKind<P> = {},
): StoredChunkRecord<P> {
  // A ChunkRecord without its payload, in its key order, built member by member so every record has
  // one shape (JSON.stringify's fast path); its batch and file are the chunk's.
  const record: { key: string; lines: number[]; orderRef?: string; cells?: string[][] } = {
    key: order.key,
    lines: order.lines,
  };
  if (order.orderRef !== undefined) record.orderRef = order.orderRef;
  if (!rebuildsExactly(kind, columns, order))
    record.cells = order.rows.map((row) => columns.map((column) => row[column] ?? ''));
  const codec = kind.payloadCodec;
  const packed = codec?.version === undefined ? undefined : packExactly(codec, codec.version, order.payload);
  return packed === undefined
    ? Object.assign(record, { payload: order.payload })
    : Object.assign(record, { packed: packed.value });
}

/** The payload packed, when the packed form gives back exactly the same payload. */
function packExactly<P>(codec: PayloadCodec<P>, version: number, payload: P): { value: unknown } | undefined {
  if (codec.packExactly !== undefined) {
    const value = codec.packExactly(payload);
    return value === undefined ? undefined : { value };
  }
  const value = codec.pack(payload);
  return sameJson(codec.unpack(value, version), payload) ? { value } : undefined;
}

/**
 * A chunk job of `records` of one batch, `layout` the version its packed payloads are in (its kind's
 * PayloadCodec.version); `file` when its records are not of the batch's own file (a requeue's).
 */
export function chunkJob<P>(
  batchId: string,
  records: StoredChunkRecord<P>[],
  layout: number | undefined,
  file?: string,
): ChunkJobData<P> {
  return {
    v: JOB_DATA_VERSION,
    batchId,
    ...(file === undefined ? {} : { file }),
    ...(layout === undefined ? {} : { pk: layout }),
    records,
  };
}

/**
 * The JSON of a chunk job `{name, data}` around its records, for the ledger's kept job (RESERVE_CHUNK
 * joins `head`, the records it reserved and `tail`): chunkJob's own output, so the two cannot differ.
 */
export function keptChunkFrame(
  name: string,
  batchId: string,
  layout: number | undefined,
  file?: string,
): { head: string; tail: string } {
  const json = JSON.stringify({ name, data: chunkJob(batchId, [], layout, file) });
  const at = json.lastIndexOf('"records":[]');
  return { head: json.slice(0, at + '"records":['.length), tail: json.slice(at + '"records":['.length) };
}

/** Refuses a job written by a newer bulkorder than this one. */
function checkJobVersion(data: { v?: number }, jobId: string): void {
  const version = data.v ?? 1;
  if (!Number.isInteger(version) || version < 1)
    throw new JobDataError('JOB_DATA_MALFORMED', `job ${jobId}: data version ${String(data.v)} is not a version`, {
      jobId,
    });
  if (version > JOB_DATA_VERSION) {
    throw new JobDataError(
      'JOB_DATA_NEWER',
      `job ${jobId}: data version ${version} was written by a newer bulkorder; this one reads up to ${JOB_DATA_VERSION}`,
      { jobId, version, known: JOB_DATA_VERSION },
    );
  }
}

/**
 * A chunk job's records with their payloads, each packed one unpacked in the job's layout (`pk`;
 * absent: 1). Throws JobDataError for a job this code cannot read; nothing is guessed.
 */
function readChunk<P>(data: ChunkJobData<P>, jobId: string, codec: PayloadCodec<P> | undefined): UnpackedChunk<P> {
  checkJobVersion(data, jobId);
  const layout = data.pk ?? 1;
  const records = data.records.map((record): ChunkRecord<P> => {
    if (record.packed === undefined) return record as ChunkRecord<P>;
    if (codec === undefined)
      throw new JobDataError(
        'JOB_DATA_MALFORMED',
        `job ${jobId}: record ${record.key} has a packed payload and its kind no codec`,
        { jobId },
      );
    const { packed, ...rest } = record;
    try {
      return { ...rest, payload: codec.unpack(packed, layout) };
    } catch (error) {
      if (error instanceof JobDataError)
        throw new JobDataError(error.code, `job ${jobId}, record ${record.key}: ${error.message}`, {
          ...error.details,
          jobId,
        });
      throw error;
    }
  });
  return { ...data, records };
}

/** True when the kind rebuilds exactly the cells of `order.rows` under `columns` (a missing cell is '') from the payload. */
function rebuildsExactly<P>(
  kind: JobKind<P>,
  columns: readonly string[],
  order: { rows: readonly Record<string, string>[]; payload: P; orderRef?: string | undefined },
): boolean {
  const { rows, payload, orderRef } = order;
  const rebuild = kind.rebuildRows;
  if (
    rebuild === undefined ||
    columns.length !== rebuild.columns.length ||
    columns.some((c, i) => c !== rebuild.columns[i])
  )
    return false;
  const rebuilt = rebuild.rows(payload, orderRef);
  return (
    rebuilt.length === rows.length &&
    rebuilt.every(
      (row, r) =>
        row.length === columns.length &&
        // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- r and c are below the lengths checked here
        row.every((value, c) => value === (rows[r]![columns[c]!] ?? '')),
    )
  );
}

/**
 * True when `a` and `b` have the same JSON text (JSON.stringify(a) === JSON.stringify(b)) for the
 * plain data of a payload, compared in place: keys in the same order, undefined members left out
 * as JSON leaves them. No strings built: this runs for every record an import queues.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = definedKeys(a as Record<string, unknown>);
  const right = definedKeys(b as Record<string, unknown>);
  if (left.length !== right.length) return false;
  for (let i = 0; i < left.length; i++) {
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- i < left.length; an index loop, run for every record queued
    const key = left[i]!;
    if (key !== right[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}

function definedKeys(object: Record<string, unknown>): string[] {
  return Object.keys(object).filter((key) => object[key] !== undefined);
}
