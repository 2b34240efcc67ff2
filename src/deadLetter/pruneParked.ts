import type { RedisClient } from '../redis.js';
import type { Keyspace, ParkedKind } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';

/** Where one kind of parked record lives: the Redis, its keyspace and the kind (dead or held). */
export interface ParkedIndex {
  redis: RedisClient;
  keys: Keyspace;
  kind: ParkedKind;
}

/** Removes the index members of `orderKeys` whose records no longer exist (src/lua/scripts/dropGhosts-1.lua). Returns how many. */
export async function dropGhosts(
  redis: RedisClient,
  keys: Keyspace,
  kind: ParkedKind,
  orderKeys: readonly string[],
): Promise<number> {
  if (orderKeys.length === 0) return 0;
  return defineScripts(redis).bulkorderDropGhosts(keys.parkedIndex(kind), keys.parked(kind, ''), ...orderKeys);
}

/** Removes every `kind` record parked at or before `now - retentionMs` (in pages of 1000, pruneParked-1.lua). Returns how many. */
export async function pruneParked(index: ParkedIndex, retentionMs: number, now = Date.now()): Promise<number> {
  const { redis, keys, kind } = index;
  const commands = defineScripts(redis);
  let total = 0;
  for (;;) {
    const removed = await commands.bulkorderPruneParked(
      keys.parkedIndex(kind),
      now - retentionMs,
      keys.parked(kind, ''),
    );
    total += removed;
    if (removed < 1000) return total;
  }
}
