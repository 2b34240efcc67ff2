import type { BatchFix } from '../batches/batchStore.js';
import { acknowledge, NOTHING_OPEN, openCounts, readOpen, type OpenGroup } from '../open/openList.js';
import type { OpenItem } from '../open/openItem.js';
import type { DashboardTarget } from './dashboardState.js';
import { h, type Safe } from './html.js';
import { csrfField, kindQuery, page, time, type PageContext } from './layout.js';

/** Items shown per group (the CLI's `open --all` lists every one). */
const PER_GROUP = 50;

/**
 * `/open`, "Needs a person": the same open items as `bulkorder open` (src/open/), grouped by cause, oldest
 * first, each with the action that resolves it; with actions allowed, a form acknowledges the ticked items
 * with who and why. A night is done when this page says nothing is open.
 */
export async function openPage(target: DashboardTarget, ctx: PageContext): Promise<string> {
  const list = await readOpen({ services: target.services, cli: target.services.kind.cli, now: Date.now() });
  const k = kindQuery(ctx.kind);
  const duplicates = list.groups.filter((g) => g.kind === 'duplicate');
  const batchLink = (id: string | undefined) =>
    id === undefined ? '' : h`<a href="/batches/${encodeURIComponent(id)}${k}">${id}</a>`;
  const body = h`
<p data-test="open-summary">${
    list.total === 0
      ? NOTHING_OPEN
      : `${list.total} open: ${openCounts(list)}. Oldest first; each group says what resolves it.`
  }</p>
${ctx.canAct && list.total > 0 ? h`<form id="ack" method="post" action="/open/ack">${csrfField(ctx)}</form>` : ''}
${list.groups.map(
  (group) => h`<h2 data-test="open-group" data-kind="${group.kind}">${group.count} × ${group.cause}</h2>
<p><strong>To resolve:</strong> <code>${group.action}</code></p>
<table data-test="open-items"><tr>${ctx.canAct ? h`<th style="width:24px">✓</th>` : ''}<th>item</th><th>since</th><th>batch</th><th>about</th></tr>
${group.items.slice(0, PER_GROUP).map(
  (
    item,
  ) => h`<tr data-id="${item.id}">${ctx.canAct ? h`<td><input type="checkbox" name="ids" value="${item.id}" form="ack" aria-label="select ${item.id}"></td>` : ''}
<td>${itemLink(item, k)}</td>
<td>${time(item.since, ctx.timeZone)}</td><td>${batchLink(item.batchId)}</td><td>${item.subject}</td></tr>`,
)}</table>${group.count > PER_GROUP ? h`<p>... and ${group.count - PER_GROUP} more (<code>${target.services.kind.cli} open --all</code>).</p>` : ''}
${group === duplicates.at(-1) ? duplicatesForm(duplicates, ctx) : ''}`,
)}
${
  ctx.canAct && list.total > 0
    ? h`<fieldset><legend>Acknowledge the ticked items (they need nothing more)</legend>
<label>why <input name="note" form="ack" required size="50" data-test="ack-note"></label>
<label>who <input name="by" form="ack" size="16" placeholder="your basic-auth name"></label>
<button form="ack" data-test="ack-button">Acknowledge</button></fieldset>`
    : ''
}
${
  list.acknowledged.length === 0
    ? ''
    : h`<h2>Acknowledged (${list.acknowledged.length}, not counted)</h2><table data-test="open-acknowledged"><tr><th>item</th><th>by</th><th>why</th><th>when</th></tr>
${list.acknowledged.map((a) => h`<tr><td>${a.id}</td><td>${a.ack.by}</td><td>${a.ack.note}</td><td>${time(a.ack.at, ctx.timeZone)}</td></tr>`)}</table>`
}`;
  // Not reloaded while a person may be typing why they acknowledge (a reload would lose it).
  return page(ctx, 'Needs a person', body, ctx.canAct && list.total > 0 ? {} : { refreshSeconds: 30 });
}

/**
 * With actions allowed, under the possible duplicates: acknowledge every one listed, or one batch's, as
 * `review duplicates ack` does (who and why into the batch's history of fixes). `until` is the newest listed,
 * so one flagged while the person reads the page is not acknowledged unseen.
 */
function duplicatesForm(groups: readonly OpenGroup[], ctx: PageContext): Safe | string {
  const items = groups.flatMap((g) => g.items);
  if (!ctx.canAct || items.length === 0) return '';
  const perBatch = new Map<string, number>();
  for (const { batchId } of items) if (batchId !== undefined) perBatch.set(batchId, (perBatch.get(batchId) ?? 0) + 1);
  const until = items.reduce((newest, item) => Math.max(newest, item.since), 0);
  return h`<form method="post" action="/open/duplicates/ack" data-test="dup-ack-form">${csrfField(ctx)}<input type="hidden" name="until" value="${until}">
<fieldset><legend>Acknowledge possible duplicates (checked on the service: no second copy, or it was cancelled there)</legend>
<label>which <select name="batch" data-test="dup-ack-batch"><option value="">all ${items.length} listed</option>${[...perBatch].map(([id, n]) => h`<option value="${id}">batch ${id} (${n})</option>`)}</select></label>
<label>why <input name="why" required size="40" data-test="dup-ack-why"></label>
<label>who <input name="by" size="16" placeholder="your basic-auth name"></label>
<button data-test="dup-ack-button">Acknowledge</button></fieldset></form>`;
}

/** An item's own page: an order's for dead letters and held orders, the batch's for a held batch. */
function itemLink(item: OpenItem, k: string): Safe | string {
  if (item.kind === 'dead' || item.kind === 'held')
    return h`<a href="/orders/${encodeURIComponent(item.subject)}${k}">${item.id}</a>`;
  if (item.kind === 'batch' && item.batchId !== undefined)
    return h`<a href="/batches/${encodeURIComponent(item.batchId)}${k}" data-test="held-batch-link">${item.id}</a>`;
  return item.id;
}

/** The ack form's post: acknowledges the ticked ids; returns what to tell the person. */
export async function acknowledgeOpen(
  target: DashboardTarget,
  form: { ids: string[]; note: string | undefined; by: string },
): Promise<string> {
  if (form.ids.length === 0) return 'Nothing selected: tick the items first.';
  if (form.note === undefined || form.note.trim() === '') return 'Say why: an acknowledgement records who and why.';
  const { acknowledged, closed } = await acknowledge(
    { services: target.services, cli: target.services.kind.cli, now: Date.now() },
    form.ids,
    { by: form.by, note: form.note.trim() },
  );
  const n = acknowledged.length;
  const gone = form.ids.length - n;
  return `Acknowledged by ${form.by}: ${n} item${n === 1 ? '' : 's'}${closed.length === 0 ? '' : ` (${closed.length} possible duplicate${closed.length === 1 ? '' : 's'} closed: who and why in the batch's history of fixes)`}${gone > 0 ? ` (${gone} were no longer open)` : ''}.`;
}

/** A batch's history of fixes, for its page: what was fixed, how, in which batch, when and by whom. */
export function fixesTable(fixes: readonly BatchFix[], ctx: PageContext): Safe {
  if (fixes.length === 0) return h``;
  const k = kindQuery(ctx.kind);
  const how: Record<BatchFix['how'], string> = {
    delivered: 'sent again and delivered',
    superseded: 'superseded by a fixed row, delivered',
    released: 'released (sent again)',
    resolved: 'resolved as delivered',
    dead: 'sent again, dead-lettered again (counted there)',
    held: 'sent again, held (counted there)',
    'release undone': 'release undone: held again',
    purged: 'purged: its record forgotten, not sent',
    acknowledged: 'possible duplicate acknowledged',
  };
  const was = { dead: 'dead-lettered', held: 'held', duplicate: 'possible duplicate' } as const;
  return h`<h2>Fixed since</h2><table data-test="fixes"><tr><th>order key</th><th>was</th><th>what happened</th><th>in batch</th><th>by</th><th>when</th></tr>
${fixes.map(
  (
    f,
  ) => h`<tr><td><a href="/orders/${encodeURIComponent(f.key)}${k}">${f.key}</a></td><td>${was[f.was] ?? f.was}</td><td>${how[f.how] ?? f.how}${f.note ? h`<br><small>${f.note}</small>` : ''}</td>
<td><a href="/batches/${encodeURIComponent(f.batch)}${k}">${f.batch}</a></td><td>${f.by ?? '-'}</td><td>${time(f.at, ctx.timeZone)}</td></tr>`,
)}</table>`;
}
