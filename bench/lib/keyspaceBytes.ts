/**
 * Redis memory by kind of key, from totals: every key under a prefix (SCAN), its MEMORY USAGE
 * summed per kind. A figure per order is then a total divided by the orders, which stays right
 * whatever one key holds (a job hash of one order, or a chunk job of ten).
 */
import { QueueKeys } from 'bullmq';
import type { Redis } from 'ioredis';

/** Keys and their MEMORY USAGE in bytes, summed. */
export interface KeyTotal {
  keys: number;
  bytes: number;
}

export interface KeyspaceBytes {
  /** BullMQ's job hashes of the queue (`<prefix>:<queue>:<jobId>`; not its lists, streams or locks). */
  jobHashes: KeyTotal;
  /** Ledger entries (`<prefix>:ledger:<orderKey>`), one per order. */
  ledgerEntries: KeyTotal;
  /** Every other key under the prefix: wait list, event stream, batch record, unqueued index... */
  otherKeys: KeyTotal;
}

/** MEMORY USAGE calls per pipeline: bounded, so a million keys never sit in one reply. */
const PIPELINE = 1000;

/** Sums MEMORY USAGE (every field: SAMPLES 0) of every key under `prefix`, by kind. */
export async function keyspaceBytes(client: Redis, prefix: string, queueName: string): Promise<KeyspaceBytes> {
  const queueKeys = new Set(Object.values(new QueueKeys(prefix).getKeys(queueName)));
  const jobPrefix = `${prefix}:${queueName}:`;
  const ledgerPrefix = `${prefix}:ledger:`;
  const totals: KeyspaceBytes = {
    jobHashes: { keys: 0, bytes: 0 },
    ledgerEntries: { keys: 0, bytes: 0 },
    otherKeys: { keys: 0, bytes: 0 },
  };
  const kindOf = (key: string): KeyTotal => {
    if (key.startsWith(ledgerPrefix)) return totals.ledgerEntries;
    // A job's own hash has no further `:` part (its lock and logs do) and is none of the queue's keys.
    if (key.startsWith(jobPrefix) && !key.includes(':', jobPrefix.length) && !queueKeys.has(key))
      return totals.jobHashes;
    return totals.otherKeys;
  };
  // SCAN may return a key twice (the table resized between calls): each is counted once.
  const seen = new Set<string>();
  let cursor = '0';
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', PIPELINE);
    cursor = next;
    const keys = found.filter((key) => !seen.has(key));
    for (const key of keys) seen.add(key);
    if (keys.length === 0) continue;
    const pipeline = client.pipeline();
    for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', '0');
    const sizes = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const total = kindOf(key);
      total.keys += 1;
      total.bytes += Number(sizes[i]?.[1] ?? 0);
    });
  } while (cursor !== '0');
  return totals;
}
