import { basename } from 'node:path';
import type { Batch } from '../batches/batchStore.js';
import type { ParkedStore } from '../deadLetter/parkedStore.js';
import type { NotifyEvent } from './notifyEvent.js';

/**
 * The notification for a settled batch: `batch-settled` when every queued order was delivered
 * and no row was rejected, `batch-needs-attention` otherwise (the exit code `import --wait`
 * would give: 0 or 4), with the batch's most frequent error codes.
 */
export async function batchNotice(batch: Batch, parked: readonly ParkedStore[], options: { dashboardUrl?: string; now?: number }): Promise<NotifyEvent> {
  const codes = new Map<string, number>();
  for (const store of parked) {
    for await (const { record } of store.scan({ batchId: batch.id })) {
      const code = record.code ?? (record.httpStatus === undefined ? 'NO_ANSWER' : `HTTP_${record.httpStatus}`);
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  }
  const needsAttention = batch.dead > 0 || batch.held > 0 || batch.rejected > 0 || batch.importState === 'failed';
  const file = basename(batch.file);
  const counts = {
    rows: batch.rows,
    orders: batch.orders,
    rejected: batch.rejected,
    queued: batch.enqueued,
    delivered: batch.delivered,
    deadLettered: batch.dead,
    held: batch.held,
    skippedDelivered: batch.skippedDelivered,
  };
  const text = needsAttention
    ? `Batch ${batch.id} (${file}) needs attention: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held for review, ${batch.rejected} rejected.`
    : `Batch ${batch.id} (${file}) settled: all ${batch.delivered} queued orders delivered.`;
  const topErrorCodes = [...codes.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([code, count]) => ({ code, count }));
  return {
    event: needsAttention ? 'batch-needs-attention' : 'batch-settled',
    env: batch.env,
    text: options.dashboardUrl === undefined ? text : `${text}\n${options.dashboardUrl}/batches/${encodeURIComponent(batch.id)}`,
    at: new Date(options.now ?? Date.now()).toISOString(),
    batchId: batch.id,
    file,
    counts,
    exitCode: needsAttention ? 4 : 0,
    topErrorCodes,
    ...(options.dashboardUrl === undefined ? {} : { dashboardUrl: `${options.dashboardUrl}/batches/${encodeURIComponent(batch.id)}` }),
  };
}
