import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import { flatPairs } from '../redis/flatPairs.js';
import { chunkJobId } from '../queues.js';

/**
 * Promotes the jobs of one batch that rest delayed, so they go now that what held them back is over:
 * chunks a worker took while the batch's file was still read (they rest in batchGate's wait), and
 * those of a held batch a person released or cancelled (they rest until near its next probe, up to
 * 15 s). A job taken meanwhile is left alone. Returns how many were promoted.
 */
export async function wakeBatchJobs(queue: Queue, redis: RedisClient, batchId: string): Promise<number> {
  // Job ids of a batch's chunks are `<batchId>.<n>` (chunkJobId); a batch id has no glob characters.
  const pattern = `${chunkJobId(batchId, '')}*`;
  let cursor = '0';
  let woken = 0;
  do {
    const [next, flat] = await redis.zscan(queue.toKey('delayed'), cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const [id] of flatPairs(flat)) {
      const job = await queue.getJob(id);
      if (job === undefined) continue;
      // Taken or promoted by another meanwhile: not delayed any more, nothing to do.
      woken += await job.promote().then(
        () => 1,
        () => 0,
      );
    }
  } while (cursor !== '0');
  return woken;
}
