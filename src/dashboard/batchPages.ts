import { access } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isSettled, type Batch } from '../batches/batchStore.js';
import type { ParkedItem } from '../deadLetter/parkedStore.js';
import type { DashboardTarget } from './dashboardState.js';
import { h, type Safe } from './html.js';
import { bar, kindQuery, maskedWho, page, time, type PageContext } from './layout.js';
import { batchTable, stateOf } from './overviewPage.js';
import { formatAge } from '../deadLetter/formatParked.js';

/** `/batches`: the most recent batches. */
export async function batchesPage(target: DashboardTarget, ctx: PageContext): Promise<string> {
  const batches = await target.services.batches.list(100);
  return page(ctx, 'Batches', batchTable(batches, ctx), { refreshSeconds: 10 });
}

/** The results and rejects files `import --wait` writes beside the input, when this host can read them. */
export async function batchFiles(batch: Batch): Promise<{ results?: string; rejects?: string }> {
  const stem = join(dirname(batch.file), basename(batch.file).replace(/\.(csv|tsv|txt|json|ndjson|jsonl)$/i, ''));
  const found: { results?: string; rejects?: string } = {};
  for (const which of ['results', 'rejects'] as const) {
    const path = `${stem}.${which}.csv`;
    if (await access(path).then(() => true, () => false)) found[which] = path;
  }
  return found;
}

/** `/batches/:id`: counts, progress, downloads, and its dead-lettered and held orders (filter by outcome). */
export async function batchPage(target: DashboardTarget, ctx: PageContext, batch: Batch, outcome: string | undefined): Promise<string> {
  const k = kindQuery(ctx.kind, '&');
  const files = await batchFiles(batch);
  const kinds = outcome === 'dead' ? [target.dead] : outcome === 'held' ? [target.held] : [target.dead, target.held];
  const items: ParkedItem[] = [];
  for (const store of kinds) items.push(...(await store.select({ batchId: batch.id })));
  const base = `/batches/${encodeURIComponent(batch.id)}`;
  const body = h`
<table><tr><th>file</th><td>${batch.file}</td></tr><tr><th>sha256</th><td>${batch.sha256 || '-'}</td></tr>
<tr><th>started</th><td>${time(batch.startedAt)}</td></tr><tr><th>state</th><td data-test="batch-state">${stateOf(batch)}</td></tr>
<tr><th>progress</th><td>${bar(batch.delivered + batch.dead + batch.held, batch.enqueued)}</td></tr>
<tr><th>rows / orders</th><td>${batch.rows} rows, ${batch.orders} orders: ${batch.valid} valid, ${batch.rejected} rejected</td></tr>
<tr><th>queued</th><td>${batch.enqueued}; skipped ${batch.skippedDelivered} already delivered, ${batch.skippedHeld} held, ${batch.skippedQueued} queued elsewhere</td></tr>
<tr><th>outcomes</th><td><span class="ok">${batch.delivered} delivered</span>, <span class="bad">${batch.dead} dead-lettered</span>, <span class="warn">${batch.held} held for review</span></td></tr>
<tr><th>files</th><td>${files.results === undefined && files.rejects === undefined ? 'no results or rejects file on this host (import --wait writes them beside the input)' : ''}
${files.results === undefined ? '' : h`<a href="${base}/results.csv${kindQuery(ctx.kind)}">results.csv</a> `}${files.rejects === undefined ? '' : h`<a href="${base}/rejects.csv${kindQuery(ctx.kind)}">rejects.csv</a>`}</td></tr></table>
<p>Show: <a href="${base}?outcome=all${k}">dead-lettered and held</a> · <a href="${base}?outcome=dead${k}">dead-lettered</a> · <a href="${base}?outcome=held${k}">held for review</a>
 · delivered orders are listed in the results file.</p>
${parkedTable(items, ctx)}`;
  // Followed live while it is being delivered (the upload page's Import opens it).
  return page(ctx, `Batch ${batch.id}`, body, isSettled(batch) ? {} : { refreshSeconds: 3 });
}

/** Dead letters and held orders, personal data masked; the order page shows the rest. */
export function parkedTable(items: readonly ParkedItem[], ctx: PageContext, options: { selectable?: boolean } = {}): Safe {
  if (items.length === 0) return h`<p data-test="parked-empty">None.</p>`;
  const now = Date.now();
  const k = kindQuery(ctx.kind);
  return h`<table data-test="parked"><tr>${options.selectable === true ? h`<th><span title="select">✓</span></th>` : ''}<th>order key</th><th>outcome</th><th>batch</th><th>HTTP</th><th>code</th><th>message</th><th>recipient</th><th>source</th><th>age</th><th>ledger now</th></tr>
${items.map(({ record, entry }) => h`<tr data-key="${record.key}">
${options.selectable === true ? h`<td><input type="checkbox" name="keys" value="${record.key}" form="bulk" aria-label="select ${record.key}"></td>` : ''}
<td><a href="/orders/${encodeURIComponent(record.key)}${k}">${record.key}</a>${record.orderRef === undefined ? '' : h`<br><small>ref ${record.orderRef}</small>`}</td>
<td>${record.kind === 'dead' ? 'dead-lettered' : 'held'}</td><td><a href="/batches/${encodeURIComponent(record.batchId)}${k}">${record.batchId}</a></td>
<td>${record.httpStatus ?? '-'}</td><td>${record.code ?? '-'}</td><td>${record.message ?? record.reason}</td><td>${maskedWho(record.payload)}</td>
<td>${basename(record.file)}:${record.lines.join(',')}</td><td>${formatAge(now - record.parkedAt)}</td><td>${entry?.state ?? 'forgotten'}</td></tr>`)}</table>`;
}
