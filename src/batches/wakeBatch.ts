import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import { chunkJobId } from '../queues.js';

/** Delayed job ids read per ZRANGE. */
const PAGE = 1000;

/**
 * Promotes the jobs of one batch that rest delayed, so they go now that what held them back is over:
 * chunks a worker took while the batch's file was still read (they rest in batchGate's wait), and
 * those of a held batch a person released or cancelled (they rest until near its next probe, up to
 * 15 s). A job taken meanwhile is left alone. Returns how many were promoted.
 */
export async function wakeBatchJobs(queue: Queue, redis: RedisClient, batchId: string): Promise<number> {
  // Job ids of a batch's chunks are `<batchId>.<n>` (chunkJobId). Read in pages with ZRANGE, which the
  // documented least-privilege ACL grants (README "Redis"); ZSCAN's MATCH it does not.
  const prefix = chunkJobId(batchId, '');
  const ids: string[] = [];
  for (let start = 0; ; start += PAGE) {
    const page = await redis.zrange(queue.toKey('delayed'), String(start), String(start + PAGE - 1));
    ids.push(...page.filter((id) => id.startsWith(prefix)));
    if (page.length < PAGE) break;
  }
  let woken = 0;
  for (const id of ids) {
    const job = await queue.getJob(id);
    if (job === undefined) continue;
    // Taken or promoted by another meanwhile: not delayed any more, nothing to do.
    woken += await job.promote().then(
      () => 1,
      () => 0,
    );
  }
  return woken;
}
