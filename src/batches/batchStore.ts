import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';

/** Counts an import knows when it has read the whole file. */
export interface ImportCounts {
  rows: number;
  orders: number;
  valid: number;
  rejected: number;
  /** Valid orders the ledger knows as delivered (skipped unless --force). */
  skippedDelivered: number;
  /** Valid orders held for review by an earlier run (never sent while held). */
  skippedHeld: number;
  /** Valid orders already queued or in flight in another batch (that batch delivers them). */
  skippedQueued: number;
  /** Keys delivered, held or in flight with other content (ORDER_REF_REUSED): not sent. */
  conflicts: number;
  /** Of skippedDelivered: orders without orderRef identical to one delivered before. */
  skippedIdentical: number;
  /** Valid orders the ledger does not know and an earlier results file records as delivered: not sent. */
  skippedResults: number;
  enqueued: number;
}

/** Counts the workers add as the batch's orders settle. */
export interface DeliveryCounts {
  delivered: number;
  dead: number;
  held: number;
  /** Of `delivered`: orders an earlier attempt may have stored too (it was answered 5xx). */
  possibleDuplicates: number;
}

export interface Batch extends ImportCounts, DeliveryCounts {
  id: string;
  file: string;
  sha256: string;
  env: string;
  startedAt: number;
  /** The input's columns, in order: dead letters keep their cells in this order. */
  columns: string[];
  /**
   * `importing` until the whole file is queued; then `imported`; `failed` if the import stopped
   * with an error; `interrupted` if its importer vanished (no heartbeat): what it reserved is
   * queued by a reconciler and counted here.
   */
  importState: 'importing' | 'imported' | 'failed' | 'interrupted';
  /** Absolute paths of the rejects and results files, as the import chose them (the dashboard links them). */
  rejectsFile?: string;
  resultsFile?: string;
  /** Why a `failed` import stopped: the error's stable code, its message and the exit code the import gave. */
  failure?: ImportFailure;
}

/** A failed import's cause, kept on its batch for the `file-refused` notification. */
export interface ImportFailure {
  code: string;
  reason: string;
  exitCode: number;
}

const COUNT_FIELDS = [
  'rows',
  'orders',
  'valid',
  'rejected',
  'skippedDelivered',
  'skippedHeld',
  'skippedQueued',
  'conflicts',
  'skippedIdentical',
  'skippedResults',
  'enqueued',
  'delivered',
  'dead',
  'held',
  'possibleDuplicates',
] as const;

/** How long an importer may go without a heartbeat before its batch counts as interrupted. */
export const IMPORT_OWNER_TTL_MS = 10_000;

/** Batch records: one Redis hash each, indexed by start time, kept as long as the ledger. */
export class BatchStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    private readonly retentionMs: number,
  ) {
    defineScripts(redis);
  }

  /** Creates an importing batch owned by the caller, who keeps it alive with `heartbeat`. */
  async create(
    batch: Pick<Batch, 'id' | 'file' | 'sha256' | 'env' | 'startedAt' | 'columns' | 'rejectsFile' | 'resultsFile'>,
  ): Promise<void> {
    const key = this.keys.batch(batch.id);
    await this.redis
      .multi()
      .hset(key, {
        ...batch,
        columns: JSON.stringify(batch.columns),
        importState: 'importing',
        ...Object.fromEntries(COUNT_FIELDS.map((f) => [f, 0])),
      })
      .pexpire(key, this.retentionMs)
      .zadd(this.keys.batchIndex, batch.startedAt, batch.id)
      .set(this.keys.batchOwner(batch.id), '1', 'PX', IMPORT_OWNER_TTL_MS)
      .sadd(this.keys.importing, batch.id)
      .exec();
  }

  /** Renews the importer's ownership; false when the batch was closed as interrupted meanwhile. */
  async heartbeat(batchId: string): Promise<boolean> {
    return (
      (await this.redis.bulkorderHeartbeat(
        this.keys.batch(batchId),
        this.keys.batchOwner(batchId),
        IMPORT_OWNER_TTL_MS,
      )) === 1
    );
  }

  /** Whether the importer of each batch is alive (its owner key is present). */
  async ownersAlive(batchIds: readonly string[]): Promise<Map<string, boolean>> {
    const unique = [...new Set(batchIds)];
    if (unique.length === 0) return new Map();
    const pipeline = this.redis.pipeline();
    for (const id of unique) pipeline.exists(this.keys.batchOwner(id));
    const replies = (await pipeline.exec()) ?? [];
    return new Map(unique.map((id, i) => [id, Number(replies[i]?.[1] ?? 0) === 1]));
  }

  /** Closes as `interrupted` every importing batch whose importer stopped beating; returns their ids. */
  async closeOrphaned(): Promise<string[]> {
    const closed: string[] = [];
    for (const id of await this.redis.smembers(this.keys.importing)) {
      const outcome = await this.redis.bulkorderCloseOrphaned(
        this.keys.batch(id),
        this.keys.batchOwner(id),
        this.keys.importing,
        id,
        Date.now(),
      );
      if (outcome === 'closed') closed.push(id);
    }
    return closed;
  }

  /** Adds to the import counters (called once per enqueued chunk, so progress shows while importing). */
  async addImportCounts(batchId: string, delta: Partial<ImportCounts>): Promise<void> {
    const multi = this.redis.multi();
    for (const [field, by] of Object.entries(delta)) if (by) multi.hincrby(this.keys.batch(batchId), field, by);
    await multi.exec();
  }

  async finishImport(
    batchId: string,
    state: 'imported' | 'failed',
    totals: Pick<ImportCounts, 'rows' | 'orders' | 'valid' | 'rejected'>,
    failure?: ImportFailure,
  ): Promise<void> {
    const why =
      failure === undefined
        ? {}
        : { failCode: failure.code, failReason: failure.reason.slice(0, 1000), failExitCode: failure.exitCode };
    await this.redis
      .multi()
      .hset(this.keys.batch(batchId), { importState: state, ...totals, ...why })
      .del(this.keys.batchOwner(batchId))
      .srem(this.keys.importing, batchId)
      .exec();
  }

  /** Records where the results file was written (absolute), when `import --wait` chose another path than the default. */
  async setResultsFile(batchId: string, path: string): Promise<void> {
    await this.redis.hset(this.keys.batch(batchId), 'resultsFile', path);
  }

  /** The file a batch imported ('' when the batch record is gone): a delivery job of it names none. */
  async file(batchId: string): Promise<string> {
    return (await this.redis.hget(this.keys.batch(batchId), 'file')) ?? '';
  }

  async get(batchId: string): Promise<Batch | undefined> {
    const raw = await this.redis.hgetall(this.keys.batch(batchId));
    return raw.id === undefined ? undefined : toBatch(raw);
  }

  /**
   * Up to `limit` batches, most recent first, after the cursor `after` (the last id of the page
   * before): a page costs its own batches however many are kept.
   */
  async page(options: { after?: string; limit: number }): Promise<{ batches: Batch[]; next: string | undefined }> {
    const rank = options.after === undefined ? null : await this.redis.zrevrank(this.keys.batchIndex, options.after);
    // A cursor batch gone meanwhile (expired): start over rather than guess.
    const start = rank === null ? 0 : rank + 1;
    const ids = await this.redis.zrevrange(this.keys.batchIndex, start, start + options.limit);
    const batches = (await Promise.all(ids.slice(0, options.limit).map((id) => this.get(id)))).filter(
      (b): b is Batch => b !== undefined,
    );
    return { batches, next: ids.length > options.limit ? ids[options.limit - 1] : undefined };
  }

  /** Most recent first. */
  async list(limit = 20): Promise<Batch[]> {
    const ids = await this.redis.zrevrange(this.keys.batchIndex, 0, limit - 1);
    const batches = await Promise.all(ids.map((id) => this.get(id)));
    return batches.filter((b): b is Batch => b !== undefined);
  }
}

/** Every order the batch queued has ended delivered, dead-lettered or held. */
export function isSettled(batch: Batch): boolean {
  return batch.importState !== 'importing' && batch.delivered + batch.dead + batch.held >= batch.enqueued;
}

/**
 * The one "needs attention" rule (exit code 4, a drop-folder summary's flag): some row was
 * rejected, some record was skipped because it is held, or some was dead-lettered or held.
 */
export function needsAttention(facts: {
  rejected: number;
  skippedHeld: number;
  conflicts?: number;
  dead?: number;
  held?: number;
}): boolean {
  return (
    facts.rejected > 0 ||
    facts.skippedHeld > 0 ||
    (facts.conflicts ?? 0) > 0 ||
    (facts.dead ?? 0) > 0 ||
    (facts.held ?? 0) > 0
  );
}

function toBatch(raw: Record<string, string>): Batch {
  const counts = Object.fromEntries(COUNT_FIELDS.map((f) => [f, Number(raw[f] ?? 0)])) as unknown as ImportCounts &
    DeliveryCounts;
  return {
    ...counts,
    id: raw.id ?? '',
    file: raw.file ?? '',
    sha256: raw.sha256 ?? '',
    env: raw.env ?? '',
    startedAt: Number(raw.startedAt ?? 0),
    columns: JSON.parse(raw.columns ?? '[]') as string[],
    importState: (raw.importState ?? 'importing') as Batch['importState'],
    ...(raw.rejectsFile === undefined ? {} : { rejectsFile: raw.rejectsFile }),
    ...(raw.resultsFile === undefined ? {} : { resultsFile: raw.resultsFile }),
    ...(raw.failCode === undefined
      ? {}
      : { failure: { code: raw.failCode, reason: raw.failReason ?? '', exitCode: Number(raw.failExitCode ?? 1) } }),
  };
}
