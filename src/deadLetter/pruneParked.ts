import type { Redis } from 'ioredis';
import type { Keyspace, ParkedKind } from '../keyspace.js';

/**
 * Drops the parked records older than the cutoff and their index members, atomically, so no
 * list shows a ghost and a record parked anew meanwhile (a fresh score) is never touched.
 * The records expire on their own (SET PX in the settle script); this also enforces the
 * retention on records parked before they had an expiry, or under a longer retention.
 * KEYS: index. ARGV: cutoff (ms, inclusive), recordKeyPrefix (`<prefix>:<kind>:`).
 * Returns how many members it removed.
 */
export const PRUNE_PARKED = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1000)
for _, member in ipairs(members) do
  redis.call('DEL', ARGV[2] .. member)
  redis.call('ZREM', KEYS[1], member)
end
return #members
`;

interface PruneCommands {
  bulkorderPruneParked(index: string, cutoff: number, recordKeyPrefix: string): Promise<number>;
}

/** Removes every `kind` record parked at or before `now - retentionMs` (in pages of 1000). Returns how many. */
export async function pruneParked(redis: Redis, keys: Keyspace, kind: ParkedKind, retentionMs: number, now = Date.now()): Promise<number> {
  if (!('bulkorderPruneParked' in redis)) redis.defineCommand('bulkorderPruneParked', { numberOfKeys: 1, lua: PRUNE_PARKED });
  const commands = redis as Redis & PruneCommands;
  let total = 0;
  for (;;) {
    const removed = await commands.bulkorderPruneParked(keys.parkedIndex(kind), now - retentionMs, keys.parked(kind, ''));
    total += removed;
    if (removed < 1000) return total;
  }
}
