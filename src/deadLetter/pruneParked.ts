import type { RedisClient } from '../redis.js';
import type { Keyspace, ParkedKind } from '../keyspace.js';

/**
 * Drops the parked records older than the cutoff and their index members, atomically, so no
 * list shows a ghost and a record parked anew meanwhile (a fresh score) is never touched.
 * The records expire on their own (SET PX in the settle script); this also enforces the
 * retention on records parked before they had an expiry, or under a longer retention.
 * KEYS: index. ARGV: cutoff (ms, inclusive), recordKeyPrefix (`<prefix>:<kind>:`).
 * Returns how many members it removed.
 */
const PRUNE_PARKED = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1000)
for _, member in ipairs(members) do
  redis.call('DEL', ARGV[2] .. member)
  redis.call('ZREM', KEYS[1], member)
end
return #members
`;

/**
 * Removes index members whose record is gone (it expired under a retention shorter than today's),
 * checking each record in the script, so a member parked anew meanwhile stays.
 * KEYS: index. ARGV: recordKeyPrefix, member... Returns how many it removed.
 */
const DROP_GHOSTS = `
local removed = 0
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 0 then removed = removed + redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return removed
`;

interface PruneCommands {
  bulkorderPruneParked(index: string, cutoff: number, recordKeyPrefix: string): Promise<number>;
  bulkorderDropGhosts(index: string, recordKeyPrefix: string, ...members: string[]): Promise<number>;
}

function defineCommands(redis: RedisClient): RedisClient & PruneCommands {
  if (!('bulkorderPruneParked' in redis)) {
    redis.defineCommand('bulkorderPruneParked', { numberOfKeys: 1, lua: PRUNE_PARKED });
    redis.defineCommand('bulkorderDropGhosts', { numberOfKeys: 1, lua: DROP_GHOSTS });
  }
  return redis as RedisClient & PruneCommands;
}

/** Removes the index members of `orderKeys` whose records no longer exist. Returns how many. */
export async function dropGhosts(redis: RedisClient, keys: Keyspace, kind: ParkedKind, orderKeys: readonly string[]): Promise<number> {
  if (orderKeys.length === 0) return 0;
  return defineCommands(redis).bulkorderDropGhosts(keys.parkedIndex(kind), keys.parked(kind, ''), ...orderKeys);
}

/** Removes every `kind` record parked at or before `now - retentionMs` (in pages of 1000). Returns how many. */
export async function pruneParked(redis: RedisClient, keys: Keyspace, kind: ParkedKind, retentionMs: number, now = Date.now()): Promise<number> {
  const commands = defineCommands(redis);
  let total = 0;
  for (;;) {
    const removed = await commands.bulkorderPruneParked(keys.parkedIndex(kind), now - retentionMs, keys.parked(kind, ''));
    total += removed;
    if (removed < 1000) return total;
  }
}
