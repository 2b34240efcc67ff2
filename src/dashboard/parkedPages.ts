import type { LedgerEntry } from '../ledger/ledger.js';
import type { ParkedRecord } from '../deliveryJob.js';
import type { ParkedFilter, ParkedFilterFlags } from '../deadLetter/parkedFilter.js';
import type { DashboardTarget } from './dashboardState.js';
import { h } from './html.js';
import { csrfField, kindQuery, page, pager, PAGE_SIZE, time, type PageContext } from './layout.js';
import { causeTable } from './causeTable.js';
import { originalRows } from '../kinds/originalRows.js';
import { parkedTable } from './batchPages.js';

/** The filter fields as the list pages and bulk actions take them: the CLI's filter flags (and a group's cause). */
export type FilterFields = ParkedFilterFlags;

/** What a `/dead-letters` or `/held` page asks for: its filter (parsed and as typed) and its cursor. */
export interface ParkedQuery {
  /** The records to show. */
  filter: ParkedFilter;
  /** The filter's fields as typed (the form shows them again). */
  fields: FilterFields;
  /** The cursor: the records after this one; undefined for the first page. */
  after: string | undefined;
}

/**
 * `/dead-letters` and `/held`: a filter, the matching records grouped by cause (each group with its
 * actions), then the records themselves 50 a page (cursor `after`), and the bulk actions.
 */
export async function parkedListPage(
  target: DashboardTarget,
  ctx: PageContext,
  which: 'dead' | 'held',
  asked: ParkedQuery,
): Promise<string> {
  const { filter, fields, after } = asked;
  const store = which === 'dead' ? target.dead : target.held;
  // Groups and counts read every matching record: the first page shows them, later pages cost only their own.
  const first = after === undefined;
  const [causes, all, { items, next }] = await Promise.all([
    first ? store.causes(filter) : [],
    first ? store.count() : 0,
    store.page(filter, { ...(first ? {} : { after }), limit: PAGE_SIZE }),
  ]);
  const matched = causes.reduce((sum, c) => sum + c.count, 0);
  const path = which === 'dead' ? '/dead-letters' : '/held';
  const kindField = ctx.kind === 'accounts' ? { kind: 'accounts' } : {};
  const query = new URLSearchParams(
    Object.entries({ ...fields, ...kindField }).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
  const hidden = Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([name, v]) => h`<input type="hidden" name="${name}" value="${v}">`);
  const filterForm = h`<form method="get" action="${path}"><fieldset><legend>Filter</legend>
${ctx.kind === 'accounts' ? h`<input type="hidden" name="kind" value="accounts">` : ''}${fields.cause === undefined ? '' : h`<input type="hidden" name="cause" value="${fields.cause}">`}
batch <input name="batch" value="${fields.batch ?? ''}" size="24"> HTTP status <input name="status" value="${fields.status ?? ''}" size="5" placeholder="422|none">
code <input name="code" value="${fields.code ?? ''}" size="18"> older than <input name="olderThan" value="${fields.olderThan ?? ''}" size="5" placeholder="7d"> newer than <input name="newerThan" value="${fields.newerThan ?? ''}" size="5" placeholder="1h">
<button>Apply</button> <a href="${path}${kindQuery(ctx.kind)}">clear</a></fieldset></form>`;
  const bulkForm =
    which === 'dead'
      ? h`<form method="post" id="bulk" action="/dead-letters/action">${csrfField(ctx)}${hidden}
<button name="action" value="retry-selected" data-test="retry-selected">Retry selected</button>
<button name="action" value="retry-matching" data-test="retry-matching">Retry all ${first ? `${matched} ` : ''}matching</button>
<span style="margin-left:24px"><button name="action" value="purge-selected" data-test="purge-selected">Purge selected…</button>
<button name="action" value="purge-matching" data-test="purge-matching">Purge all ${first ? `${matched} ` : ''}matching…</button></span></form>`
      : h`<form method="post" id="bulk" action="/held/action">${csrfField(ctx)}${hidden}<fieldset><legend>Decide (checked on the service)</legend>
note <input name="note" size="30" placeholder="why (recorded)"> by <input name="by" value="${ctx.caller.user}" size="12">
<button name="action" value="release-selected" data-test="release-selected">Not there: release selected (send again)</button>
remote id <input name="remoteId" size="14">
<button name="action" value="resolve-selected" data-test="resolve-selected">There: resolve selected as delivered</button></fieldset></form>`;
  const actions = ctx.canAct ? bulkForm : '';
  const exportLink =
    which === 'dead'
      ? h` · <a href="/dead-letters/export.csv?${query.toString()}" data-test="export">export CSV (original columns + errors, to fix and re-import)</a>`
      : '';
  const body = h`${filterForm}
<p data-test="matched">${first ? `${matched} match (${all} in all)` : h`continued: <a href="${path}?${query.toString()}">first page</a> has the counts and groups`}${fields.cause === undefined ? '' : h` · one cause: <a href="${path}?${new URLSearchParams(Object.entries({ ...fields, cause: undefined, ...kindField }).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')).toString()}">all causes</a>`}${exportLink}</p>
${causes.length === 0 ? '' : h`<h2>By cause (${causes.length})</h2>${causeTable(causes, ctx, path, { ...fields, cause: undefined })}`}
<h2>${which === 'dead' ? 'Dead letters' : 'Held orders'}${after === undefined ? '' : ' (continued)'}</h2>
${actions}
${parkedTable(items, ctx, { selectable: ctx.canAct })}
${pager(path, { ...fields, ...kindField }, next, after === undefined)}`;
  return page(ctx, which === 'dead' ? 'Dead letters' : 'Held for review', body);
}

/** `/orders/:key`: everything about one order, personal data included (its own page only). */
export async function orderPage(target: DashboardTarget, ctx: PageContext, key: string): Promise<string | undefined> {
  const [entry, dead, held] = await Promise.all([
    target.services.ledger.get(key),
    target.dead.get(key),
    target.held.get(key),
  ]);
  if (entry === undefined && dead === undefined && held === undefined) return undefined;
  const parked = dead ?? held;
  const r = parked?.record;
  const columns = r === undefined ? undefined : (await target.services.batches.get(r.batchId))?.columns;
  const decideForm =
    r?.kind === 'dead'
      ? h`<form method="post" action="/dead-letters/action">${csrfField(ctx)}<input type="hidden" name="keys" value="${key}">
<button name="action" value="retry-selected" data-test="retry-one">Retry</button> <button name="action" value="purge-selected">Purge</button></form>`
      : h`<form method="post" action="/held/action">${csrfField(ctx)}<input type="hidden" name="keys" value="${key}"><fieldset><legend>Decide</legend>
note <input name="note" size="30"> by <input name="by" value="${ctx.caller.user}" size="12"> <button name="action" value="release-selected">Release (send again)</button>
remote id <input name="remoteId" size="14"> <button name="action" value="resolve-selected">Resolve as delivered</button></fieldset></form>`;
  const action = !ctx.canAct || parked === undefined ? '' : decideForm;
  const body = h`${ledgerTable(entry, ctx.timeZone)}
${
  r === undefined
    ? ''
    : h`<h2>${r.kind === 'dead' ? 'Dead letter' : 'Held for review'}</h2>
<table><tr><th>why</th><td>${r.reason}</td></tr><tr><th>answer</th><td>HTTP ${r.httpStatus ?? '-'} ${r.code ?? ''} ${r.message ?? ''}</td></tr>
<tr><th>source</th><td>${r.file}, lines ${r.lines.join(', ')}${r.orderRef === undefined ? '' : `, orderRef ${r.orderRef}`}</td></tr>
<tr><th>attempts</th><td>${r.attempts}, parked ${time(r.parkedAt, ctx.timeZone)}</td></tr></table>
${action}
${r.body === undefined ? '' : h`<h3>Error body${r.bodyTruncated === true ? ' (truncated)' : ''}</h3><pre data-test="error-body">${typeof r.body === 'string' ? r.body : JSON.stringify(r.body, null, 2)}</pre>`}
<h3>Payload</h3><pre>${JSON.stringify(r.payload, null, 2)}</pre>
<h3>Source rows</h3><pre data-test="source-rows">${sourceRows(r, columns, target)}</pre>`
}`;
  return page(ctx, `Order ${key}`, body);
}

function ledgerTable(entry: LedgerEntry | undefined, timeZone: string) {
  if (entry === undefined) return h`<p>The ledger no longer knows this key (retention).</p>`;
  return h`<h2>Ledger</h2><table data-test="ledger"><tr><th>state</th><td data-test="ledger-state">${entry.state}</td></tr><tr><th>batch</th><td>${entry.batchId}</td></tr>
<tr><th>attempts</th><td>${entry.attempts}</td></tr><tr><th>updated</th><td>${time(entry.updatedAt, timeZone)}</td></tr>
${entry.remoteId === undefined ? '' : h`<tr><th>remote id</th><td>${entry.remoteId}</td></tr>`}
${entry.httpStatus === undefined ? '' : h`<tr><th>HTTP status</th><td>${entry.httpStatus}</td></tr>`}
${entry.code === undefined ? '' : h`<tr><th>error</th><td>${entry.code}: ${entry.message ?? ''}</td></tr>`}
${entry.review === undefined ? '' : h`<tr><th>review</th><td>${entry.review.action} by ${entry.review.by} at ${time(entry.review.at, timeZone)}${entry.review.note === undefined ? '' : ` (${entry.review.note})`}</td></tr>`}</table>`;
}

/** The record's rows as its input had them: kept cells, or rebuilt through its kind when the job left them out. */
function sourceRows(r: ParkedRecord<unknown>, columns: readonly string[] | undefined, target: DashboardTarget): string {
  const source =
    r.cells.length > 0 ? { columns, rows: r.cells } : originalRows(r, columns, target.services.kind.rebuildRows);
  const names = source.columns;
  return source.rows
    .map(
      (row, i) =>
        `line ${r.lines[i] ?? r.lines[0] ?? '?'}: ${(names !== undefined && names.length === row.length ? row.map((v, c) => `${names[c]}=${v}`) : row).join(', ')}`,
    )
    .join('\n');
}
