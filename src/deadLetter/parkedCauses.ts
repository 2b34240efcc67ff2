import type { RedisClient } from '../redis.js';
import type { Keyspace, ParkedKind } from '../keyspace.js';
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
 * The cause fields of a slice of the index, decoded in Redis so only those cross the network (a
 * record carries its payload and source cells: 10,000 of them are megabytes). Record keys are
 * the index's members under the prefix, as in pruneParked (one slot under a hash tag).
 * KEYS: index. ARGV: recordKeyPrefix, start, stop.
 * Returns per member: key, batchId, status ('' none), code, message, parkedAt; a gone record: key only, rest ''.
 */
const CAUSES = `
local out = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[3])) do
  local json = redis.call('GET', ARGV[1] .. member)
  if json then
    local r = cjson.decode(json)
    local function s(v) if v == nil or v == cjson.null then return '' end return tostring(v) end
    table.insert(out, member); table.insert(out, s(r.batchId)); table.insert(out, s(r.httpStatus))
    table.insert(out, s(r.code)); table.insert(out, s(r.message)); table.insert(out, s(r.parkedAt))
  else
    for _, v in ipairs({ member, '', '', '', '', '' }) do table.insert(out, v) end
  end
end
return out
`;

interface CauseCommands {
  bulkorderParkedCauses(index: string, recordKeyPrefix: string, start: number, stop: number): Promise<string[]>;
}

/**
 * Counts the records that pass `filter` by cause, largest group first. A bounded scan rather than
 * an index kept by every script that parks or unparks (seven of them): it reads the index in
 * slices of 1000 and returns ~100 bytes a record, so 10,000 dead letters are 10 short calls.
 */
export async function parkedCauses(redis: RedisClient, keys: Keyspace, kind: ParkedKind, filter: ParkedFilter = {}, now = Date.now()): Promise<ParkedCause[]> {
  if (!('bulkorderParkedCauses' in redis)) redis.defineCommand('bulkorderParkedCauses', { numberOfKeys: 1, lua: CAUSES });
  const commands = redis as RedisClient & CauseCommands;
  const groups = new Map<string, ParkedCause>();
  for (let start = 0; ; start += SLICE) {
    const flat = await commands.bulkorderParkedCauses(keys.parkedIndex(kind), keys.parked(kind, ''), start, start + SLICE - 1);
    for (let i = 0; i < flat.length; i += 6) {
      const [key, batchId, status, code, message, at] = flat.slice(i, i + 6) as [string, string, string, string, string, string];
      if (batchId === '' && at === '') continue; // expired between ZRANGE and GET: the next read prunes it
      const parkedAt = Number(at);
      const fields = { key, batchId, ...(status === '' ? {} : { httpStatus: Number(status) }), ...(code === '' ? {} : { code }), ...(message === '' ? {} : { message }) };
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
