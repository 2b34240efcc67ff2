import { basename } from 'node:path';
import { originalRows, type RowRebuilder } from '../kinds/originalRows.js';
import type { ParkedItem } from './parkedStore.js';

/** `45s`, `12m`, `3h`, `2d`: how long ago, for a person. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** Where the ledger stands on a parked order, in words (a dead letter being retried is `queued`, not `dead`). */
function ledgerStateOf(item: ParkedItem): string {
  if (item.entry === undefined) return 'forgotten';
  const state = item.entry.state;
  return state === 'queued' || state === 'sending' ? `${state} (${item.entry.batchId})` : state;
}

/** A fixed-width table of parked records, one line each. */
export function parkedTable(items: readonly ParkedItem[], now = Date.now()): string[] {
  const rows = items.map(({ record, ...rest }) => [
    record.key,
    record.batchId,
    record.httpStatus === undefined ? '-' : String(record.httpStatus),
    record.code ?? '-',
    formatAge(now - record.parkedAt),
    formatAge(rest.expiresAt - now),
    `${basename(record.file)}:${record.lines.join(',')}`,
    ledgerStateOf({ record, ...rest }),
  ]);
  const header = ['ORDER KEY', 'BATCH', 'STATUS', 'CODE', 'AGE', 'EXPIRES IN', 'SOURCE', 'LEDGER'];
  // Every row has the header's eight cells; a missing one would be an empty cell, zero wide.
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)];
}

/** One parked record for `list --json`: the record, its age and expiry, and the ledger's view. */
export function parkedJson(item: ParkedItem, now = Date.now()): Record<string, unknown> {
  return {
    ...item.record,
    ageMs: now - item.record.parkedAt,
    expiresAt: new Date(item.expiresAt).toISOString(),
    ledger: item.entry ?? null,
  };
}

/** Everything kept about one parked order, for `show`. */
export function parkedDetails(
  item: ParkedItem,
  columns: readonly string[] | undefined,
  rebuild: RowRebuilder | undefined,
): string[] {
  const r = item.record;
  const lines = [
    `${r.kind === 'dead' ? 'dead letter' : 'held for review'}: ${r.key}`,
    `  batch ${r.batchId}, parked ${new Date(r.parkedAt).toISOString()} after ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}; ledger: ${ledgerStateOf(item)}`,
    `  kept until ${new Date(item.expiresAt).toISOString()} (personal data: BULKORDER_PARKED_RETENTION_DAYS), or purged sooner`,
    `  source: ${r.file}, line${r.lines.length === 1 ? '' : 's'} ${r.lines.join(', ')}${r.orderRef === undefined ? '' : `, orderRef ${r.orderRef}`}`,
    `  why: ${r.reason}`,
  ];
  if (r.httpStatus !== undefined || r.code !== undefined)
    lines.push(
      `  answer: HTTP ${r.httpStatus ?? '-'} ${r.code ?? ''}${r.message === undefined ? '' : `: ${r.message}`}`,
    );
  if (item.entry?.review !== undefined) {
    const review = item.entry.review;
    lines.push(
      `  review: ${review.action} by ${review.by} at ${new Date(review.at).toISOString()}${review.note === undefined ? '' : ` (${review.note})`}`,
    );
  }
  if (r.body !== undefined) {
    lines.push(`  error body${r.bodyTruncated === true ? ' (truncated)' : ''}:`);
    const body = typeof r.body === 'string' ? r.body : JSON.stringify(r.body, null, 2);
    lines.push(...body.split('\n').map((l) => `    ${l}`));
  }
  lines.push('  source rows:');
  // Cells left out of the job (the payload rebuilds them exactly, RecordKind.rebuildRows) come back here.
  const source: { columns: readonly string[] | undefined; rows: string[][] } =
    r.cells.length > 0 ? { columns, rows: r.cells } : originalRows(r, columns, rebuild);
  for (const [i, row] of source.rows.entries()) {
    const names = source.columns;
    const cells = names !== undefined && names.length === row.length ? row.map((v, c) => `${names[c]}=${v}`) : row;
    lines.push(`    line ${r.lines[i] ?? r.lines[0] ?? '?'}: ${cells.join(', ')}`);
  }
  lines.push(
    '  order sent:',
    ...JSON.stringify(r.payload, null, 2)
      .split('\n')
      .map((l) => `    ${l}`),
  );
  return lines;
}
