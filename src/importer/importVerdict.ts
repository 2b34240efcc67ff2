import type { ResultsCounts } from '../kinds/resultsLayout.js';
import type { ImportResult } from './importFile.js';

/**
 * Report lines for what an import did not send and a person should know: reused orderRefs
 * (conflicts) and orders without orderRef skipped as identical to one delivered before.
 */
export function importAttention(result: ImportResult, noun: string): string[] {
  const c = result.counts;
  const lines: string[] = [];
  if (c.conflicts > 0) {
    lines.push(
      `  NOT SENT: ${c.conflicts} ${noun}(s) reuse an orderRef known with other content (ORDER_REF_REUSED; line, earlier batch and what differs in the rejects file)`,
    );
  }
  if (c.skippedIdentical > 0) {
    const shown = result.identicalLines.join(', ') + (c.skippedIdentical > result.identicalLines.length ? ', ...' : '');
    lines.push(
      `  skipped as identical to ${noun}s delivered before: ${c.skippedIdentical} without orderRef (lines ${shown});`,
      `    if they are new gifts, give each an orderRef and import again`,
    );
  }
  return lines;
}

/** What a run knows of the batches that hold this file's other orders (src/importer/importAndFollow.ts reads it). */
export interface ElsewhereFacts {
  /** Each such batch's import state, with its failure's code when it failed (`failed: REDIS_CLUSTER_DOWN`). */
  states: ReadonlyMap<string, string>;
  /** Delivery workers running now (their heartbeat is fresh). */
  workers: number;
  /** The command that starts one. */
  workerCommand: string;
}

/**
 * Without --wait: the orders another batch has (they are pending, so the exit code is 4): whose they are, whether
 * that batch's import stopped (a re-run after a crash or a failover: its reservations are queued by it or by a
 * worker's reconciler), and whether a worker is running to finish them.
 */
export function elsewhereLines(result: ImportResult, noun: string, facts?: ElsewhereFacts): string[] {
  if (result.elsewhere.length === 0) return [];
  const batches = [...new Set(result.elsewhere.map((e) => e.batchId))];
  const shown = (ids: string[]) => ids.slice(0, 3).join(', ') + (ids.length > 3 ? ', ...' : '');
  const lines = [
    `  PENDING: ${result.elsewhere.length} ${noun}(s) of this file are queued by another batch (${shown(batches)}), queued elsewhere than this run;`,
  ];
  if (facts !== undefined) {
    const stopped = batches.flatMap((id) => {
      const state = facts.states.get(id);
      return state === undefined || state === 'imported' ? [] : [`${id}: ${state}`];
    });
    if (stopped.length > 0)
      lines.push(
        `    an import that stopped left them (${stopped
          .slice(0, 3)
          .join(', ')}): what it reserved is queued, by it or by a worker's reconciler, nothing is lost`,
      );
    lines.push(
      facts.workers > 0
        ? `    a worker will finish them (${facts.workers} running): nothing to do but wait, or follow them:`
        : `    no worker is running: they wait in the queue until one runs (\`${facts.workerCommand}\`); then follow them:`,
    );
  }
  lines.push(`    run the same import with --wait to follow them to their end (nothing is sent twice)`);
  return lines;
}

/**
 * With --wait: a results row that is not done (pending, queued elsewhere) or not delivered (dead-lettered, held)
 * needs attention. `refusedBefore` (the import's skippedRefused): dead-lettered rows that are old news, an
 * unchanged re-run's orders refused before with the same content (their dead letters stay open where they are, and
 * `open` lists them): alone they exit 0, with --wait as without.
 */
export function resultsAttention(results: ResultsCounts, refusedBefore = 0): boolean {
  const o = results.byOutcome;
  if ((o['dead-lettered'] ?? 0) > refusedBefore) return true;
  return ['pending', 'queued-elsewhere', 'held-for-review'].some((outcome) => (o[outcome] ?? 0) > 0);
}
