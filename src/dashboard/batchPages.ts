import { access } from 'node:fs/promises';
import { basename, isAbsolute } from 'node:path';
import { isSettled, type Batch } from '../batches/batchStore.js';
import type { ParkedItem } from '../deadLetter/parkedStore.js';
import { outputPath } from '../ingest/outputPath.js';
import type { DashboardTarget } from './dashboardState.js';
import { h, type Safe } from './html.js';
import { kindQuery, maskedWho, outcomeBar, page, pager, PAGE_SIZE, time, type PageContext } from './layout.js';
import { attention, batchTable, stateOf } from './overviewPage.js';
import { formatAge } from '../deadLetter/formatParked.js';
import { causeTable } from './causeTable.js';

/** `/batches`: the most recent batches, 50 a page. */
export async function batchesPage(
  target: DashboardTarget,
  ctx: PageContext,
  after: string | undefined,
): Promise<string> {
  const { batches, next } = await target.services.batches.page({
    ...(after === undefined ? {} : { after }),
    limit: PAGE_SIZE,
  });
  const query = { ...(ctx.kind === 'accounts' ? { kind: 'accounts' } : {}) };
  return page(
    ctx,
    'Batches',
    h`${batchTable(batches, ctx)}${pager('/batches', query, next, after === undefined)}`,
    after === undefined ? { refreshSeconds: 10 } : {},
  );
}

/**
 * The results and rejects files of a batch, when this host can read them: the absolute paths the
 * import stored (older batches: beside their file, when that path was absolute).
 */
export async function batchFiles(batch: Batch): Promise<{ results?: string; rejects?: string }> {
  const beside = (which: 'results' | 'rejects') => (isAbsolute(batch.file) ? outputPath(batch.file, which) : undefined);
  const paths = { results: batch.resultsFile ?? beside('results'), rejects: batch.rejectsFile ?? beside('rejects') };
  const found: { results?: string; rejects?: string } = {};
  for (const which of ['results', 'rejects'] as const) {
    const path = paths[which];
    if (
      path !== undefined &&
      (await access(path).then(
        () => true,
        () => false,
      ))
    )
      found[which] = path;
  }
  return found;
}

/** `/batches/:id`: counts, progress, downloads, its problems by cause and the first 50 of them. */
export async function batchPage(target: DashboardTarget, ctx: PageContext, batch: Batch): Promise<string> {
  const k = kindQuery(ctx.kind);
  const files = await batchFiles(batch);
  const filter = { batchId: batch.id };
  const [deadCauses, heldCauses, dead, held] = await Promise.all([
    target.dead.causes(filter),
    target.held.causes(filter),
    target.dead.page(filter, { limit: PAGE_SIZE }),
    target.held.page(filter, { limit: PAGE_SIZE }),
  ]);
  const problems = [...dead.items, ...held.items].slice(0, PAGE_SIZE);
  const total = batch.dead + batch.held;
  const base = `/batches/${encodeURIComponent(batch.id)}`;
  const listQuery = (path: string) =>
    `${path}?${new URLSearchParams({ batch: batch.id, ...(ctx.kind === 'accounts' ? { kind: 'accounts' } : {}) }).toString()}`;
  const body = h`
${attention(batch) ? h`<p class="breaker" data-test="attention"><strong>Needs attention:</strong> ${batch.importState === 'failed' ? 'the import failed; ' : ''}${batch.dead} dead-lettered, ${batch.held} held for review, ${batch.rejected} rows rejected${batch.skippedHeld > 0 ? `, ${batch.skippedHeld} skipped as held` : ''}.</p>` : ''}
<table><tr><th style="width:160px">file</th><td>${batch.file}</td></tr><tr><th>sha256</th><td>${batch.sha256 || '-'}</td></tr>
<tr><th>started</th><td>${time(batch.startedAt)}</td></tr><tr><th>state</th><td data-test="batch-state">${stateOf(batch)}</td></tr>
<tr><th>progress</th><td>${outcomeBar(batch)}</td></tr>
<tr><th>rows / orders</th><td>${batch.rows} rows, ${batch.orders} orders: ${batch.valid} valid, ${batch.rejected} rejected</td></tr>
<tr><th>queued</th><td>${batch.enqueued}; skipped ${batch.skippedDelivered} already delivered, ${batch.skippedHeld} held, ${batch.skippedQueued} queued elsewhere</td></tr>
<tr><th>outcomes</th><td><span class="ok">${batch.delivered} delivered</span>, <span class="bad">${batch.dead} dead-lettered</span>, <span class="warn">${batch.held} held for review</span></td></tr>
<tr><th>files</th><td data-test="files">${files.results === undefined && files.rejects === undefined ? 'no results or rejects file on this host (import --wait writes them beside the input)' : ''}
${files.results === undefined ? '' : h`<a href="${base}/results.csv${k}" title="${files.results}" data-test="results-link">results.csv</a> `}${files.rejects === undefined ? '' : h`<a href="${base}/rejects.csv${k}" title="${files.rejects}" data-test="rejects-link">rejects.csv</a>`}</td></tr></table>
${deadCauses.length === 0 ? '' : h`<h2>Dead-lettered by cause</h2>${causeTable(deadCauses, ctx, '/dead-letters', { batch: batch.id })}`}
${heldCauses.length === 0 ? '' : h`<h2>Held by cause</h2>${causeTable(heldCauses, ctx, '/held', { batch: batch.id })}`}
<h2>Problems${total > problems.length ? ` (the first ${problems.length} of ${total})` : ''}</h2>
<p>All of them: <a href="${listQuery('/dead-letters')}" data-test="batch-dead-link">dead letters of this batch</a> · <a href="${listQuery('/held')}">held orders of this batch</a> · delivered orders are listed in the results file.</p>
${parkedTable(problems, ctx)}`;
  // Followed live while it is being delivered (the upload page's Import opens it).
  return page(ctx, `Batch ${batch.id}`, body, isSettled(batch) ? {} : { refreshSeconds: 3 });
}

/** Dead letters and held orders, personal data masked; the order page shows the rest. */
export function parkedTable(
  items: readonly ParkedItem[],
  ctx: PageContext,
  options: { selectable?: boolean } = {},
): Safe {
  if (items.length === 0) return h`<p data-test="parked-empty">None.</p>`;
  const now = Date.now();
  const k = kindQuery(ctx.kind);
  return h`<table data-test="parked"><tr>${options.selectable === true ? h`<th style="width:24px"><span title="select">✓</span></th>` : ''}<th>order key</th><th>outcome</th><th>batch</th><th style="width:90px">answer</th><th>message</th><th>recipient</th><th>source</th><th style="width:70px">age</th><th style="width:80px">ledger now</th></tr>
${items.map(
  ({ record, entry }) => h`<tr data-key="${record.key}">
${options.selectable === true ? h`<td><input type="checkbox" name="keys" value="${record.key}" form="bulk" aria-label="select ${record.key}"></td>` : ''}
<td><a href="/orders/${encodeURIComponent(record.key)}${k}">${record.key}</a>${record.orderRef === undefined ? '' : h`<br><small>ref ${record.orderRef}</small>`}</td>
<td>${record.kind === 'dead' ? 'dead-lettered' : 'held'}</td><td><a href="/batches/${encodeURIComponent(record.batchId)}${k}">${record.batchId}</a></td>
<td>${record.httpStatus ?? '-'}<br><small>${record.code ?? '-'}</small></td><td>${record.message ?? record.reason}</td><td>${maskedWho(record.payload)}</td>
<td>${basename(record.file)}:${record.lines.join(',')}</td><td>${formatAge(now - record.parkedAt)}</td><td>${entry?.state ?? 'forgotten'}</td></tr>`,
)}</table>`;
}
