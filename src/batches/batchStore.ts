import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';
import { parseDialect, type CsvDialect } from '../ingest/csvDialect.js';
import { REDIS_TIME, redisTime } from '../redis/redisClock.js';

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
  /**
   * Valid orders dead-lettered before with the same content (an unchanged re-run): not sent again (old news:
   * their dead letters stay open where they are) unless `import --retry-refused`.
   */
  skippedRefused: number;
  /** Of skippedDelivered: orders without orderRef identical to one delivered before. */
  skippedIdentical: number;
  /** Valid orders the ledger does not know and an earlier results file records as delivered: not sent. */
  skippedResults: number;
  enqueued: number;
}

/** The counts of a round of an import where nothing was skipped yet (each starts at zero). */
export function noSkips(): Omit<ImportCounts, 'rows' | 'orders' | 'valid' | 'rejected' | 'enqueued'> {
  return {
    skippedDelivered: 0,
    skippedHeld: 0,
    skippedQueued: 0,
    conflicts: 0,
    skippedRefused: 0,
    skippedIdentical: 0,
    skippedResults: 0,
  };
}

/** The counts of an import that has read nothing yet. */
export function noImportCounts(): ImportCounts {
  return { rows: 0, orders: 0, valid: 0, rejected: 0, ...noSkips(), enqueued: 0 };
}

/** Counts the workers add as the batch's orders settle. */
export interface DeliveryCounts {
  delivered: number;
  dead: number;
  held: number;
  /** Of `delivered`: orders an earlier attempt may have stored too (it was answered 5xx). */
  possibleDuplicates: number;
  /**
   * Dead letters and held orders of this batch a later step fixed: delivered by `dead-letters retry`,
   * superseded by a fixed row's delivery, released by `review release`, forgotten by a purge (src/lua/includes/moveParked.lua).
   * No longer counted in `dead` or `held`; the batch's fixes (BatchStore.fixes) say what, by whom, when.
   */
  resolved: number;
  /** Dead letters of this batch sent again and parked again in a later batch, which counts them now. */
  movedOn: number;
}

/** One entry of a batch's history of fixes (written by the ledger's scripts, src/lua/includes/moveParked.lua). */
export interface BatchFix {
  /** The order key that was parked (or flagged a possible duplicate) here. */
  key: string;
  was: 'dead' | 'held' | 'duplicate';
  /**
   * `delivered` (sent again and delivered), `superseded` (a fixed row, `by` its key, was delivered),
   * `released` / `resolved` (a person, `by`), `dead` / `held` (sent again and parked again in `batch`),
   * `release undone`, `purged` (a person forgot the record: `dead-letters purge`, `review purge`; `by` who),
   * `acknowledged` (a possible duplicate a person checked: `review duplicates ack`, `by` who, `note` why).
   */
  how:
    | 'delivered'
    | 'superseded'
    | 'released'
    | 'resolved'
    | 'dead'
    | 'held'
    | 'release undone'
    | 'purged'
    | 'acknowledged';
  /** The batch the fix happened in (for `resolved`, this one). */
  batch: string;
  /** Who (released, resolved), or the key that superseded it. */
  by?: string;
  note?: string;
  at: number;
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
  /**
   * When the import's read of the file ended, found unchanged (ms): from then on the batch may be sent
   * while the import still queues the rest (batchGate-4.lua); absent while the file is read.
   */
  readAt?: number;
  /**
   * Absolute paths of the rejects and results files, recorded once written (so `status --json` and the
   * dashboard name files that exist); the drop folder records their place in done/ after the move.
   */
  rejectsFile?: string;
  resultsFile?: string;
  /** Where the results file will be written when the batch settles (uploads, schedules: src/batches/resultsTrail.ts). */
  pendingResultsFile?: string;
  /** The input's CSV dialect (delimiter, encoding, BOM): its dead letters are exported in it. */
  dialect?: CsvDialect;
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
  'skippedRefused',
  'skippedIdentical',
  'skippedResults',
  'enqueued',
  'delivered',
  'dead',
  'held',
  'possibleDuplicates',
  'resolved',
  'movedOn',
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

  /**
   * Creates an importing batch owned by the caller, who keeps it alive with `heartbeat`. It starts
   * at Redis's time (fixtures give one): notifiers on other hosts compare it with their watermark.
   */
  async create(
    batch: Pick<Batch, 'id' | 'file' | 'sha256' | 'env' | 'columns' | 'dialect'> & { startedAt?: number },
  ): Promise<void> {
    const key = this.keys.batch(batch.id);
    const { dialect, ...rest } = batch;
    const fields = { ...rest, startedAt: batch.startedAt ?? (await redisTime(this.redis)) };
    await this.redis
      .multi()
      .hset(key, {
        ...fields,
        ...(dialect === undefined ? {} : { dialect: JSON.stringify(dialect) }),
        columns: JSON.stringify(batch.columns),
        importState: 'importing',
        ...Object.fromEntries(COUNT_FIELDS.map((f) => [f, 0])),
      })
      .pexpire(key, this.retentionMs)
      .zadd(this.keys.batchIndex, fields.startedAt, batch.id)
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
        REDIS_TIME,
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

  /** Notes that the import's read of the file has ended (checked unchanged): the batch may go while the rest is queued. */
  async markRead(batchId: string): Promise<void> {
    await this.redis.hset(this.keys.batch(batchId), 'readAt', Date.now());
  }

  /** Records where the results file was written (absolute). */
  async setResultsFile(batchId: string, path: string): Promise<void> {
    await this.setFiles(batchId, { resultsFile: path });
  }

  /**
   * Records the batch's files where they are now (absolute paths): its rejects or results file once
   * written, or all of them after a move (the drop folder's done/). A batch record gone meanwhile
   * (retention) is not made again.
   */
  async setFiles(
    batchId: string,
    files: Partial<Pick<Batch, 'file' | 'rejectsFile' | 'resultsFile' | 'pendingResultsFile'>>,
  ): Promise<void> {
    const key = this.keys.batch(batchId);
    const set = Object.fromEntries(Object.entries(files).filter((e): e is [string, string] => e[1] !== undefined));
    if (Object.keys(set).length === 0) return;
    // HSET only on a batch that still exists (its id field): a script would do, a watch-free check is enough here.
    if ((await this.redis.hexists(key, 'id')) === 0) return;
    await this.redis.hset(key, set);
  }

  /**
   * Records that the batch's results file is due once it settles (src/batches/resultsTrail.ts): `due` is
   * what writing it takes (JSON), `resultsFile` where it will be, which `status` and the batch's page name.
   */
  async expectResults(batchId: string, resultsFile: string, due: string): Promise<void> {
    await this.setFiles(batchId, { pendingResultsFile: resultsFile });
    await this.redis.hset(this.keys.resultsDue, batchId, due);
  }

  /** Every batch whose results file is due: batch id -> what expectResults was given. */
  dueResults(): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keys.resultsDue);
  }

  /** Takes the right to write a due results file for `ms` (another process then leaves it alone). */
  async claimResults(batchId: string, ms: number): Promise<boolean> {
    return (await this.redis.set(this.keys.resultsDueLock(batchId), '1', 'PX', ms, 'NX')) === 'OK';
  }

  async releaseResults(batchId: string): Promise<void> {
    await this.redis.del(this.keys.resultsDueLock(batchId));
  }

  /** The due results file is written (`resultsFile`), or never will be (the batch failed or is gone). */
  async settleResults(batchId: string, resultsFile?: string): Promise<void> {
    if (resultsFile !== undefined) await this.setFiles(batchId, { resultsFile });
    await this.redis
      .multi()
      .hdel(this.keys.batch(batchId), 'pendingResultsFile')
      .hdel(this.keys.resultsDue, batchId)
      .exec();
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

  /** The batch's history of fixes, newest first (at most 1,000 kept). */
  async fixes(batchId: string, limit = 1000): Promise<BatchFix[]> {
    const raw = await this.redis.lrange(this.keys.batchFixes(batchId), 0, limit - 1);
    return raw.flatMap((json) => {
      try {
        return [JSON.parse(json) as BatchFix];
      } catch {
        return [];
      }
    });
  }

  /** Most recent first. */
  async list(limit = 20): Promise<Batch[]> {
    const ids = await this.redis.zrevrange(this.keys.batchIndex, 0, limit - 1);
    const batches = await Promise.all(ids.map((id) => this.get(id)));
    return batches.filter((b): b is Batch => b !== undefined);
  }
}

/** Every order the batch queued has ended delivered, dead-lettered or held (or was fixed or passed on since). */
export function isSettled(batch: Batch): boolean {
  return batch.importState !== 'importing' && ended(batch) >= batch.enqueued;
}

/** How many of the batch's queued orders have ended, however they were fixed later. */
export function ended(batch: DeliveryCounts): number {
  return batch.delivered + batch.dead + batch.held + batch.resolved + batch.movedOn;
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
  const dialect = parseDialect(raw.dialect);
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
    ...(raw.readAt === undefined ? {} : { readAt: Number(raw.readAt) }),
    ...(raw.rejectsFile === undefined ? {} : { rejectsFile: raw.rejectsFile }),
    ...(raw.resultsFile === undefined ? {} : { resultsFile: raw.resultsFile }),
    ...(raw.pendingResultsFile === undefined ? {} : { pendingResultsFile: raw.pendingResultsFile }),
    ...(dialect === undefined ? {} : { dialect }),
    ...(raw.failCode === undefined
      ? {}
      : { failure: { code: raw.failCode, reason: raw.failReason ?? '', exitCode: Number(raw.failExitCode ?? 1) } }),
  };
}
