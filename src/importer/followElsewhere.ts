import { setTimeout as sleep } from 'node:timers/promises';
import type { TextSink } from '../textSink.js';
import type { Ledger } from '../ledger/ledger.js';

export interface FollowElsewhereOptions {
  /** Called every few seconds while waiting (reconcileImports: an importer that died has its orders queued). */
  reconcile?: () => Promise<unknown>;
  /** Where progress goes; default stderr. */
  out?: TextSink;
  pollMs?: number;
  /** Stop following at this time (ms since epoch); default never. */
  deadline?: number;
  signal?: AbortSignal;
}

const FINAL = new Set(['delivered', 'dead', 'held']);
const RECONCILE_EVERY_MS = 3_000;

/**
 * Follows orders of this file that another batch queued (an earlier run, perhaps one whose
 * importer died) until each is delivered, dead-lettered or held, so `import --wait` reports on
 * every order of its file, not only the ones it queued itself. Returns how many are still open.
 */
export async function followElsewhere(
  ledger: Ledger,
  orderKeys: readonly string[],
  options: FollowElsewhereOptions = {},
): Promise<number> {
  const out = options.out ?? process.stderr;
  let open = [...orderKeys];
  let lastReconcile = 0;
  let lastLog = 0;
  while (open.length > 0) {
    const still: string[] = [];
    for (let start = 0; start < open.length; start += 500) {
      const keys = open.slice(start, start + 500);
      const entries = await ledger.getMany(keys);
      keys.forEach((key, i) => {
        const entry = entries[i];
        if (entry !== undefined && !FINAL.has(entry.state)) still.push(key);
      });
    }
    open = still;
    const now = Date.now();
    if (open.length === 0 || now >= (options.deadline ?? Infinity) || options.signal?.aborted) break;
    if (now - lastLog >= 10_000) {
      out.write(`waiting for ${open.length} order(s) of this file that another batch queued\n`);
      lastLog = now;
    }
    if (options.reconcile !== undefined && now - lastReconcile >= RECONCILE_EVERY_MS) {
      lastReconcile = now;
      await options.reconcile().catch(() => undefined);
    }
    await sleep(options.pollMs ?? 500);
  }
  return open.length;
}
