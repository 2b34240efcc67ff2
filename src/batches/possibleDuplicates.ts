import type { RedisClient } from '../redis.js';
import { dropStale } from '../redis/dropStale.js';
import type { Keyspace } from '../keyspace.js';
import type { BatchFix } from './batchStore.js';
import { flatPairs } from '../redis/flatPairs.js';

/**
 * Possible duplicates (POSSIBLE_DUPLICATE): orders delivered after an earlier attempt was answered 5xx, so the
 * service may hold a second copy. The delivered settle indexes each (settleOne.lua: `Keyspace.duplicates`, scored
 * by delivery time, and its facts in `Keyspace.duplicateInfo`); a person checks them on the service and
 * acknowledges them (`review duplicates ack`), which takes them off the index and writes who, why and when into
 * their batch's history of fixes. Reads touch these two keys only, never the keyspace.
 */
export interface PossibleDuplicate {
  orderKey: string;
  /** The batch that delivered it. */
  batchId: string;
  /** When it was delivered (ms). */
  at: number;
  /** The doubtful attempt's answer (the last failed attempt's): HTTP status, code, message, when known. */
  status?: number;
  code?: string;
  message?: string;
}

/** Where the index lives and how long an entry is worth keeping (the ledger's retention: its entry is gone after). */
export interface DuplicateStore {
  redis: RedisClient;
  keys: Keyspace;
  retentionMs: number;
}

/** Who acknowledged, and why (both recorded in the batch's history of fixes). */
export interface DuplicateAck {
  by: string;
  why: string;
}

/** How many index entries are read per round trip. */
const PAGE = 1000;

/** `HTTP 502 UPSTREAM_DOWN: gateway closed`: the doubt's cause in words. */
export function duplicateCause(d: PossibleDuplicate): string {
  const answer = [d.status === undefined ? '' : `HTTP ${d.status}`, d.code ?? ''].filter((p) => p !== '').join(' ');
  return `${answer || 'answered 5xx'}${d.message ? `: ${d.message.slice(0, 120)}` : ''}`;
}

/**
 * Every possible duplicate not acknowledged yet, oldest first (of one batch when given). Entries older than the
 * ledger's retention are dropped on the way (their ledger entries are gone too).
 */
export async function listDuplicates(
  store: DuplicateStore,
  options: { batchId?: string; now: number },
): Promise<PossibleDuplicate[]> {
  const { redis, keys } = store;
  const cutoff = options.now - store.retentionMs;
  await dropStale(redis, { index: keys.duplicates, details: keys.duplicateInfo }, cutoff);
  const found: PossibleDuplicate[] = [];
  for (let start = 0; ; start += PAGE) {
    const page = await redis.zrange(keys.duplicates, String(start), String(start + PAGE - 1), 'WITHSCORES');
    if (page.length === 0) break;
    const members: [string, number][] = [];
    for (const [key, score] of flatPairs(page)) members.push([key, Number(score)]);
    const infos = await redis.hmget(keys.duplicateInfo, ...members.map(([key]) => key));
    members.forEach(([orderKey, at], i) => {
      const info = parseInfo(infos[i] ?? null);
      const d: PossibleDuplicate = { orderKey, batchId: info.batch ?? '', at };
      if (typeof info.status === 'number') d.status = info.status;
      if (typeof info.code === 'string') d.code = info.code;
      if (typeof info.message === 'string') d.message = info.message;
      if (options.batchId === undefined || d.batchId === options.batchId) found.push(d);
    });
    if (page.length < PAGE * 2) break;
  }
  return found;
}

/**
 * Acknowledges these possible duplicates: off the index (no list, `open` or page shows them again) and, per
 * order, an `acknowledged` fix with who, why and when first in its batch's history. Returns how many were flagged.
 */
export async function acknowledgeDuplicates(
  store: DuplicateStore,
  items: readonly PossibleDuplicate[],
  ack: DuplicateAck,
  now: number,
): Promise<number> {
  const { redis, keys } = store;
  let taken = 0;
  for (let start = 0; start < items.length; start += PAGE) {
    const part = items.slice(start, start + PAGE);
    const batchIds = [...new Set(part.map((d) => d.batchId).filter((id) => id !== ''))];
    const ttls = await Promise.all(batchIds.map((id) => redis.pttl(keys.batch(id))));
    const multi = redis.multi();
    for (const d of part) multi.zrem(keys.duplicates, d.orderKey);
    multi.hdel(keys.duplicateInfo, ...part.map((d) => d.orderKey));
    batchIds.forEach((batchId, i) => {
      // A batch gone (retention) keeps no history; the flag still leaves the index.
      const ttl = ttls[i] ?? -2;
      if (ttl === -2) return;
      const fixes = keys.batchFixes(batchId);
      for (const d of part.filter((p) => p.batchId === batchId))
        multi.lpush(
          fixes,
          JSON.stringify({
            key: d.orderKey,
            was: 'duplicate',
            how: 'acknowledged',
            batch: batchId,
            by: ack.by,
            note: ack.why,
            at: now,
          } satisfies BatchFix),
        );
      multi.ltrim(fixes, 0, 999);
      if (ttl > 0) multi.pexpire(fixes, ttl);
    });
    const replies = (await multi.exec()) ?? [];
    taken += replies.slice(0, part.length).reduce((sum, [, n]) => sum + Number(n ?? 0), 0);
  }
  return taken;
}

function parseInfo(json: string | null): { batch?: string; status?: unknown; code?: unknown; message?: unknown } {
  if (json === null) return {};
  try {
    return JSON.parse(json) as { batch?: string };
  } catch {
    return {};
  }
}
