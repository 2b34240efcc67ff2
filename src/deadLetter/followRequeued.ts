import { followBatch } from '../batches/followBatch.js';
import type { TextSink } from '../textSink.js';
import type { BatchStore } from '../batches/batchStore.js';
import { ExitCode } from '../errors.js';
import type { RequeueBatch } from './requeueParked.js';

/** Report lines and exit code of a requeue (`dead-letters retry`, `review release`). */
export interface RequeueReport {
  lines: string[];
  /** The same per batch, for `--json`: its counts and, when followed, how it ended. */
  batches: RequeuedBatchReport[];
  exitCode: number;
}

/** One batch of a requeue as `--json` gives it. */
export interface RequeuedBatchReport {
  batchId: string;
  counts: RequeueBatch['counts'];
  /** With --wait: whether every order settled before --timeout, and how they ended. */
  settled?: boolean;
  delivered?: number;
  dead?: number;
  held?: number;
}

/**
 * Describes the batches a requeue made and, with `wait`, follows each until its orders settle:
 * exit 0 when all were delivered, 4 when some were dead-lettered or held again (or following
 * stopped before the end).
 */
export async function reportRequeued(
  made: readonly RequeueBatch[],
  batches: BatchStore,
  options: { wait: boolean; timeoutMs?: number; out?: TextSink },
): Promise<RequeueReport> {
  const lines: string[] = [];
  const reports: RequeuedBatchReport[] = [];
  let attention = false;
  if (made.length === 0) lines.push('nothing matched: no order queued');
  for (const { batchId, counts } of made) {
    lines.push(
      `batch ${batchId}: queued ${counts.enqueued} of ${counts.orders}; skipped: ${counts.skippedDelivered} already delivered, ${counts.skippedHeld} held, ${counts.skippedQueued} queued by another batch`,
    );
    if (!options.wait) {
      lines.push(`  follow it with: bulkorder status ${batchId}`);
      reports.push({ batchId, counts });
      continue;
    }
    const { batch, settled } = await followBatch(batches, batchId, {
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.out === undefined ? {} : { out: options.out }),
    });
    lines.push(
      `  ${settled ? 'settled' : 'still running (stopped following)'}: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held for review`,
    );
    reports.push({ batchId, counts, settled, delivered: batch.delivered, dead: batch.dead, held: batch.held });
    attention ||= !settled || batch.dead > 0 || batch.held > 0;
  }
  return { lines, batches: reports, exitCode: attention ? ExitCode.needsAttention : ExitCode.ok };
}
