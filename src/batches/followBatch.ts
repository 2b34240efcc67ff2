import { setTimeout as sleep } from 'node:timers/promises';
import { InfrastructureError } from '../errors.js';
import type { TextSink } from '../textSink.js';
import { ended, isSettled, type Batch, type BatchStore } from './batchStore.js';

export interface FollowOptions {
  /** Where progress goes; default stderr (stdout stays for the summary). */
  out?: TextSink;
  /** How often the batch is read (its end is seen within this); default 500 ms. */
  pollMs?: number;
  /** On a terminal, the progress bar is drawn at most this often (and when the batch settles); default 500 ms. */
  drawEveryMs?: number;
  /** Without a terminal: one line every this often; default 10 s. */
  logEveryMs?: number;
  /** Stop following after this long (the batch goes on); default no limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Asked every `watchEveryMs` (default 2 s): lines saying why the batch may not move (printed
   * when they change) and whether a settled-looking batch may still get orders back (an open
   * breaker requeues its burst when it closes), so following goes on.
   */
  watch?: () => Promise<{ lines: string[]; pending: boolean }>;
  watchEveryMs?: number;
  /** Called with each read of the batch that does not end the following, before the wait for the next. */
  onRead?: (batch: Batch) => Promise<void>;
}

/**
 * Follows a batch until every order it queued is delivered, dead-lettered or held. On a
 * terminal it draws a live progress bar; otherwise it prints a plain line now and then.
 * Returns the batch as last seen, and whether it settled.
 */
export async function followBatch(
  batches: BatchStore,
  batchId: string,
  options: FollowOptions = {},
): Promise<{ batch: Batch; settled: boolean }> {
  const out = options.out ?? process.stderr;
  const tty = out.isTTY === true;
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  let lastLog = 0;
  let lastDraw = -Infinity;
  let lastWatch = 0;
  let said = '';
  let pending = false;
  for (;;) {
    const batch = await batches.get(batchId);
    if (batch === undefined)
      // It was there when following began (its import made it): Redis evicted or lost it.
      throw new InfrastructureError(
        'REDIS_KEYS_VANISHED',
        `batch ${batchId} vanished from Redis while it was followed (evicted or lost): its counts are gone, and a re-run could send again what it delivered; stop every worker, set maxmemory-policy noeviction and check persistence`,
      );
    let now = Date.now();
    if (options.watch !== undefined && now - lastWatch >= (options.watchEveryMs ?? 2000)) {
      lastWatch = now;
      const seen = await options.watch();
      pending = seen.pending;
      const text = seen.lines.join('\n');
      if (text !== said && text !== '') out.write(`${tty ? '\n' : ''}${text}\n`);
      said = text;
      now = Date.now();
    }
    const settled = isSettled(batch) && !pending;
    const last = settled || now >= deadline || options.signal?.aborted === true;
    if (tty) {
      if (last || now - lastDraw >= (options.drawEveryMs ?? 500)) {
        out.write(`\r${progressLine(batch)}\x1b[K${settled ? '\n' : ''}`);
        lastDraw = now;
      }
    } else if (settled || now - lastLog >= (options.logEveryMs ?? 10_000)) {
      out.write(`${progressLine(batch)}\n`);
      lastLog = now;
    }
    if (last) return { batch, settled };
    await options.onRead?.(batch);
    await sleep(options.pollMs ?? 500);
  }
}

export function progressLine(batch: Batch, width = 30): string {
  const done = ended(batch);
  const total = Math.max(batch.enqueued, done);
  const empty = batch.importState === 'importing' ? 0 : 1;
  const fraction = total === 0 ? empty : done / total;
  const filled = Math.round(fraction * width);
  const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
  const importing = IMPORT_STATE_NOTE[batch.importState] ?? '';
  const fixed = batch.resolved > 0 ? `, ${batch.resolved} fixed since (resolved)` : '';
  const passed = batch.movedOn > 0 ? `, ${batch.movedOn} passed on to a later batch` : '';
  return `[${bar}] ${done}/${total} settled: ${batch.delivered} delivered, ${batch.dead} dead-lettered, ${batch.held} held${fixed}${passed}${importing}`;
}

/** What the progress line adds while an import is not finished. */
const IMPORT_STATE_NOTE: Partial<Record<Batch['importState'], string>> = {
  importing: ' (still reading the file)',
  interrupted: ' (its importer stopped: what it reserved is queued; re-run the import for the rest)',
};
