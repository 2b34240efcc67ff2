import { basename } from 'node:path';
import type { Batch } from '../batches/batchStore.js';
import type { ParkedStore } from '../deadLetter/parkedStore.js';
import { ExitCode } from '../errors.js';
import type { NotifyEvent } from './notifyEvent.js';

export interface NoticeOptions {
  dashboardUrl?: string;
  now?: number;
}

/**
 * The notification for a settled batch: `batch-settled` when every queued order was delivered
 * and no row was rejected, `batch-needs-attention` otherwise (the exit code `import --wait`
 * would give: 0 or 4), with the batch's most frequent error codes; `file-refused` (exit 3) or
 * `import-failed` for an import that stopped, with its code and reason.
 */
export async function batchNotice(
  batch: Batch,
  parked: readonly ParkedStore[],
  options: NoticeOptions,
): Promise<NotifyEvent> {
  if (batch.importState === 'failed') return failedNotice(batch, options);
  const codes = new Map<string, number>();
  for (const store of parked) {
    for await (const { record } of store.scan({ batchId: batch.id })) {
      const code = record.code ?? (record.httpStatus === undefined ? 'NO_ANSWER' : `HTTP_${record.httpStatus}`);
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  }
  const attention = needsAttention(batch);
  const file = basename(batch.file);
  const settled =
    batch.enqueued === 0
      ? `Batch ${batch.id} (${file}) settled: nothing new to send (${batch.skippedDelivered} already delivered, ${batch.skippedQueued} queued by another batch).`
      : `Batch ${batch.id} (${file}) settled: all ${batch.delivered} queued orders delivered.`;
  const text = attention
    ? `Batch ${batch.id} (${file}) needs attention: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held for review, ${batch.rejected} rejected.`
    : settled;
  const topErrorCodes = [...codes.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([code, count]) => ({ code, count }));
  const event = attention ? 'batch-needs-attention' : 'batch-settled';
  return {
    ...base(event, batch, text, options),
    counts: counts(batch),
    exitCode: attention ? ExitCode.needsAttention : ExitCode.ok,
    topErrorCodes,
  };
}

/** `batch-recovered`: a batch announced as needing attention whose orders all ended delivered (the breaker's burst sent again, a retry). */
export function recoveredNotice(batch: Batch, options: NoticeOptions): NotifyEvent {
  const file = basename(batch.file);
  const rejected = batch.rejected > 0 ? ` ${batch.rejected} rejected rows are still in the rejects file.` : '';
  return {
    ...base(
      'batch-recovered',
      batch,
      `Batch ${batch.id} (${file}) recovered: all ${batch.delivered} queued orders delivered after all.${rejected}`,
      options,
    ),
    counts: counts(batch),
    exitCode:
      batch.rejected > 0 || batch.skippedHeld > 0 || batch.conflicts > 0 ? ExitCode.needsAttention : ExitCode.ok,
    resolves: `batch-needs-attention:${batch.id}`,
  };
}

/**
 * `batch-resolved`: a batch announced for dead-lettered or held orders none of which is open any more
 * because a person's fix closed them (a dead letter retried or superseded by a fixed row's delivery, a
 * held order released or resolved, counted `resolved`; refused again, passed on to the later batch that
 * announces it). It closes the batch's `batch-needs-attention` (`resolves`).
 */
export function resolvedNotice(batch: Batch, options: NoticeOptions): NotifyEvent {
  const file = basename(batch.file);
  const passedOn = batch.movedOn > 0 ? ` ${batch.movedOn} refused again, now open in a later batch.` : '';
  const rejected = batch.rejected > 0 ? ` ${batch.rejected} rejected rows are still in the rejects file.` : '';
  return {
    ...base(
      'batch-resolved',
      batch,
      `Batch ${batch.id} (${file}) resolved: nothing of it needs a person any more (${batch.delivered} delivered, ${batch.resolved} fixed since).${passedOn}${rejected}`,
      options,
    ),
    counts: { ...counts(batch), resolved: batch.resolved, passedOn: batch.movedOn },
    exitCode: ExitCode.ok,
    resolves: `batch-needs-attention:${batch.id}`,
  };
}

/** Whether a settled batch's delivery (not its rows) needed a person: recovery is about these. */
export function deliveryNeedsAttention(batch: Batch): boolean {
  return batch.dead > 0 || batch.held > 0;
}

function needsAttention(batch: Batch): boolean {
  return deliveryNeedsAttention(batch) || batch.rejected > 0 || batch.skippedHeld > 0 || batch.conflicts > 0;
}

function failedNotice(batch: Batch, options: NoticeOptions): NotifyEvent {
  const file = basename(batch.file);
  const failure = batch.failure ?? { code: 'IMPORT_FAILED', reason: 'the import stopped', exitCode: ExitCode.internal };
  const refused = failure.exitCode === ExitCode.fileRefused;
  // The reason names the file by its full path; a notification gives names without folders.
  const reason = failure.reason.split(batch.file).join(file);
  const text = refused
    ? `File ${file} refused (${failure.code}): ${reason}. Nothing after the refusal was queued; fix the file and import it again.`
    : `Import of ${file} stopped (${failure.code}): ${reason}. Run it again to finish (nothing is queued twice).`;
  return {
    ...base(refused ? 'file-refused' : 'import-failed', batch, text, options),
    counts: counts(batch),
    exitCode: failure.exitCode,
    code: failure.code,
    reason,
  };
}

function base(event: NotifyEvent['event'], batch: Batch, text: string, options: NoticeOptions): NotifyEvent {
  const link =
    options.dashboardUrl === undefined ? undefined : `${options.dashboardUrl}/batches/${encodeURIComponent(batch.id)}`;
  return {
    id: `${event}:${batch.id}`,
    event,
    env: batch.env,
    text: link === undefined ? text : `${text}\n${link}`,
    at: new Date(options.now ?? Date.now()).toISOString(),
    batchId: batch.id,
    file: basename(batch.file),
    ...(link === undefined ? {} : { dashboardUrl: link }),
  };
}

function counts(batch: Batch): Record<string, number> {
  return {
    rows: batch.rows,
    orders: batch.orders,
    rejected: batch.rejected,
    queued: batch.enqueued,
    delivered: batch.delivered,
    deadLettered: batch.dead,
    held: batch.held,
    skippedDelivered: batch.skippedDelivered,
  };
}
