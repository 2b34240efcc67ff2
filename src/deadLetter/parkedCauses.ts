import type { ParkedIndex } from './pruneParked.js';
import { defineScripts } from '../lua/defineScripts.js';
import { causeId, matchesFilter, type ParkedFilter } from './parkedFilter.js';

/** Why records are parked, as one group: the API's answer (HTTP status, error code, message). */
export interface ParkedCause {
  httpStatus?: number;
  code?: string;
  message?: string;
  count: number;
  /** The most recent parked-at of the group. */
  lastAt: number;
}

/** Index members one script call reads: each call is short, so Redis serves others in between. */
const SLICE = 1000;

/**
 * Counts the records that pass `filter` by cause, largest group first. A bounded scan rather than
 * an index kept by every script that parks or unparks (seven of them): it reads the index in
 * slices of 1000 and returns ~100 bytes a record, so 10,000 dead letters are 10 short calls.
 */
export async function parkedCauses(
  index: ParkedIndex,
  filter: ParkedFilter = {},
  now = Date.now(),
): Promise<ParkedCause[]> {
  const { redis, keys, kind } = index;
  // The cause fields decoded in Redis (parkedCauses-1.lua): only those cross the network.
  const commands = defineScripts(redis);
  const groups = new Map<string, ParkedCause>();
  for (let start = 0; ; start += SLICE) {
    const flat = await commands.bulkorderParkedCauses(
      keys.parkedIndex(kind),
      keys.parked(kind, ''),
      start,
      start + SLICE - 1,
    );
    for (let i = 0; i < flat.length; i += 6) {
      const [key, batchId, status, code, message, at] = flat.slice(i, i + 6) as [
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      if (batchId === '' && at === '') continue; // expired between ZRANGE and GET: the next read prunes it
      const parkedAt = Number(at);
      const fields = {
        key,
        batchId,
        ...(status === '' ? {} : { httpStatus: Number(status) }),
        ...(code === '' ? {} : { code }),
        ...(message === '' ? {} : { message }),
      };
      if (!matchesFilter(fields, filter) || !inAge(parkedAt, filter, now)) continue;
      const id = causeId(fields);
      const group = groups.get(id);
      if (group !== undefined) {
        group.count++;
        group.lastAt = Math.max(group.lastAt, parkedAt);
      } else {
        const { key: _key, batchId: _batch, ...cause } = fields;
        groups.set(id, { ...cause, count: 1, lastAt: parkedAt });
      }
    }
    if (flat.length < SLICE * 6) break;
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || b.lastAt - a.lastAt);
}

function inAge(parkedAt: number, filter: ParkedFilter, now: number): boolean {
  if (filter.olderThanMs !== undefined && parkedAt > now - filter.olderThanMs) return false;
  if (filter.newerThanMs !== undefined && parkedAt < now - filter.newerThanMs) return false;
  return true;
}
