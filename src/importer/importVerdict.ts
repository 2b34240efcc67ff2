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

/** Without --wait: the orders another batch has (they are pending, so the exit code is 4). */
export function elsewhereLines(result: ImportResult, noun: string): string[] {
  if (result.elsewhere.length === 0) return [];
  const batches = [...new Set(result.elsewhere.map((e) => e.batchId))];
  return [
    `  PENDING: ${result.elsewhere.length} ${noun}(s) of this file are queued by another batch (${batches.slice(0, 3).join(', ')}${batches.length > 3 ? ', ...' : ''});`,
    `    run the same import with --wait to follow them to their end (nothing is sent twice)`,
  ];
}

/** With --wait: a results row that is not done (pending, queued elsewhere) or not delivered (dead-lettered, held) needs attention. */
export function resultsAttention(results: ResultsCounts): boolean {
  const o = results.byOutcome;
  return ['pending', 'queued-elsewhere', 'dead-lettered', 'held-for-review'].some((outcome) => (o[outcome] ?? 0) > 0);
}
