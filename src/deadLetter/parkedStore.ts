import type { RedisClient } from '../redis.js';
import type { Keyspace, ParkedKind } from '../keyspace.js';
import type { Ledger, LedgerEntry } from '../ledger/ledger.js';
import type { ParkedRecord } from '../deliveryJob.js';
import { matchesFilter, type ParkedFilter } from './parkedFilter.js';
import { dropGhosts, pruneParked } from './pruneParked.js';
import { parkedCauses, type ParkedCause } from './parkedCauses.js';
import { defined } from '../errors.js';

/** A parked record with what the ledger says about its order now. */
export interface ParkedItem {
  record: ParkedRecord;
  /** `undefined` when the ledger has forgotten the key (retention) while the record is kept. */
  entry: LedgerEntry | undefined;
  /** When the record (personal data) expires: parked at + the parked retention. */
  expiresAt: number;
}

const PAGE = 500;

/**
 * Reads dead letters or held orders: the `<kind>:<key>` records the workers write atomically with
 * the ledger, through their `<kind>-index` (score = parked at). Read-only; the transitions are the
 * ledger's. Records are kept until resolved, purged, or `ledger.parkedRetentionMs` old (they hold
 * personal data); every read first prunes the expired ones, so counts and lists never show ghosts.
 * The list can still grow within the retention: it is read in pages.
 */
export class ParkedStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    private readonly ledger: Ledger,
    readonly kind: ParkedKind,
  ) {}

  /** How long a record is kept after it was parked. */
  get retentionMs(): number {
    return this.ledger.parkedRetentionMs;
  }

  /** How many records the index holds. */
  async count(): Promise<number> {
    await this.prune();
    return this.redis.zcard(this.keys.parkedIndex(this.kind));
  }

  /** Drops expired records and their index members; returns how many. */
  prune(now = Date.now()): Promise<number> {
    return pruneParked({ redis: this.redis, keys: this.keys, kind: this.kind }, this.retentionMs, now);
  }

  /** One record, or undefined. */
  async get(orderKey: string): Promise<ParkedItem | undefined> {
    const json = await this.redis.get(this.keys.parked(this.kind, orderKey));
    if (json === null) return undefined;
    const record = JSON.parse(json) as ParkedRecord;
    return { record, entry: await this.ledger.get(orderKey), expiresAt: record.parkedAt + this.retentionMs };
  }

  /** Every record that passes the filter, oldest first, with its ledger entry. */
  async *scan(filter: ParkedFilter = {}, now = Date.now()): AsyncGenerator<ParkedItem> {
    const index = this.keys.parkedIndex(this.kind);
    await this.prune(now);
    const max = filter.olderThanMs === undefined ? '+inf' : String(now - filter.olderThanMs);
    const min = filter.newerThanMs === undefined ? '-inf' : String(now - filter.newerThanMs);
    let offset = 0;
    for (;;) {
      const orderKeys = filter.keys ?? (await this.redis.zrangebyscore(index, min, max, 'LIMIT', offset, PAGE));
      const records =
        orderKeys.length === 0 ? [] : await this.redis.mget(orderKeys.map((key) => this.keys.parked(this.kind, key)));
      const parsed = records.flatMap((json) => (json === null ? [] : [JSON.parse(json) as ParkedRecord]));
      const ghosts = filter.keys === undefined ? orderKeys.filter((_, i) => records[i] === null) : [];
      // Removed members shift the next page's offset back by as many.
      offset += orderKeys.length - (await dropGhosts(this.redis, this.keys, this.kind, ghosts));
      const wanted = parsed.filter((record) => matchesFilter(record, filter) && inAgeRange(record, filter, now));
      const entries = await this.ledger.getMany(wanted.map((record) => record.key));
      for (const [i, record] of wanted.entries())
        yield { record, entry: entries[i], expiresAt: record.parkedAt + this.retentionMs };
      if (filter.keys !== undefined || orderKeys.length < PAGE) return;
    }
  }

  /**
   * Up to `limit` records that pass the filter, oldest first, after the cursor `after` (the `next`
   * of the page before): a page costs its own records, however long the list. The cursor is the
   * last key shown; when that record is gone meanwhile, its parked-at (`<ms>.<key>`) finds the place.
   */
  async page(
    filter: ParkedFilter,
    options: { after?: string; limit: number },
    now = Date.now(),
  ): Promise<{ items: ParkedItem[]; next: string | undefined }> {
    const index = this.keys.parkedIndex(this.kind);
    const items: ParkedItem[] = [];
    let start = await this.startAfter(options.after);
    // A page's worth (and one to tell whether more follow) first; a narrow filter widens the reads.
    let slice = options.limit + 1;
    for (;;) {
      const orderKeys = await this.redis.zrange(index, String(start), String(start + slice - 1));
      const records =
        orderKeys.length === 0 ? [] : await this.redis.mget(orderKeys.map((key) => this.keys.parked(this.kind, key)));
      const wanted: ParkedRecord[] = [];
      for (const json of records) {
        const record = json === null ? undefined : (JSON.parse(json) as ParkedRecord);
        if (record !== undefined && matchesFilter(record, filter) && inAgeRange(record, filter, now))
          wanted.push(record);
      }
      const taken = wanted.slice(0, options.limit - items.length);
      const entries = await this.ledger.getMany(taken.map((record) => record.key));
      taken.forEach((record, i) =>
        items.push({ record, entry: entries[i], expiresAt: record.parkedAt + this.retentionMs }),
      );
      if (items.length >= options.limit) {
        const last = defined(items.at(-1), 'the last item of a full page').record;
        // A next page only when something is left to read: the rest of this slice or more index.
        const more =
          wanted.length > taken.length ||
          orderKeys.indexOf(last.key) < orderKeys.length - 1 ||
          orderKeys.length === slice;
        return { items, next: more ? `${last.parkedAt}.${last.key}` : undefined };
      }
      if (orderKeys.length < slice) return { items, next: undefined };
      start += slice;
      slice = Math.min(PAGE, slice * 4);
    }
  }

  /** The index position after a page cursor (0 without one). */
  private async startAfter(after: string | undefined): Promise<number> {
    if (after === undefined) return 0;
    const dot = after.indexOf('.');
    const key = after.slice(dot + 1);
    const index = this.keys.parkedIndex(this.kind);
    const rank = await this.redis.zrank(index, key);
    if (rank !== null) return rank + 1;
    // Gone (retried, purged): members parked at the same time sort by key, so count those up to it.
    const score = Number(after.slice(0, dot));
    const before = await this.redis.zcount(index, '-inf', `(${score}`);
    const same = await this.redis.zrangebyscore(index, score, score);
    return before + same.filter((member) => member < key).length;
  }

  /** The records that pass the filter counted by cause (HTTP status, code, message), largest group first. */
  async causes(filter: ParkedFilter = {}, now = Date.now()): Promise<ParkedCause[]> {
    await this.prune(now);
    return parkedCauses({ redis: this.redis, keys: this.keys, kind: this.kind }, filter, now);
  }

  /** All of `scan` at once (for commands that act on the selection). */
  async select(filter: ParkedFilter = {}): Promise<ParkedItem[]> {
    const items: ParkedItem[] = [];
    for await (const item of this.scan(filter)) items.push(item);
    return items;
  }
}

function inAgeRange(record: ParkedRecord, filter: ParkedFilter, now: number): boolean {
  if (filter.olderThanMs !== undefined && record.parkedAt > now - filter.olderThanMs) return false;
  if (filter.newerThanMs !== undefined && record.parkedAt < now - filter.newerThanMs) return false;
  return true;
}
