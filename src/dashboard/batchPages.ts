import { access } from 'node:fs/promises';
import { basename } from 'node:path';
import { isSettled, type Batch } from '../batches/batchStore.js';
import type { ParkedItem } from '../deadLetter/parkedStore.js';
import type { DashboardTarget } from './dashboardState.js';
import { h, type Safe } from './html.js';
import {
  csrfField,
  kindQuery,
  maskedWho,
  outcomeBar,
  page,
  pager,
  PAGE_SIZE,
  time,
  type PageContext,
} from './layout.js';
import { attention, batchTable, stateOf } from './overviewPage.js';
import { formatAge } from '../deadLetter/formatParked.js';
import { causeTable } from './causeTable.js';
import { fixesTable } from './openPage.js';
import { bannerView, breakerBanner } from './breakerBanner.js';
import { describeHealth, readDeliveryHealth } from '../services/deliveryControl.js';
import { readBreakerView } from '../worker/breakerView.js';
import { readBatchCircuit, type BatchCircuitView } from '../batches/batchCircuit.js';
import { actOnBatch, describeCircuit } from '../services/batchControl.js';
import { isBulkorderError } from '../errors.js';

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
 * The results and rejects files of a batch, when this host can read them: the absolute paths the batch
 * recorded once they were written (an import's own, a drop-folder file's in done/, an upload's or a
 * schedule's in the results folder).
 */
export async function batchFiles(batch: Batch): Promise<{ results?: string; rejects?: string }> {
  const paths = { results: batch.resultsFile, rejects: batch.rejectsFile };
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
  const services = target.services;
  const settled = isSettled(batch);
  const [deadCauses, heldCauses, dead, held, health, view, fixes, circuit] = await Promise.all([
    target.dead.causes(filter),
    target.held.causes(filter),
    target.dead.page(filter, { limit: PAGE_SIZE }),
    target.held.page(filter, { limit: PAGE_SIZE }),
    // Not settled: what its orders wait for (breaker, pause, no worker), as `status` says it.
    settled ? undefined : readDeliveryHealth(services, services.delivery.breaker.alertAfterMs),
    settled ? undefined : readBreakerView(services.redis, services.keys, services.delivery.breaker),
    services.batches.fixes(batch.id),
    readBatchCircuit(services.redis, services.keys, batch.id),
  ]);
  // The batch's own circuit (its canary held it, a person cancelled or released it), as `batch show` says it.
  const circuitLines = describeCircuit(circuit, services.kind.cli, ctx.timeZone).map((line) => line.trim());
  const problems = [...dead.items, ...held.items].slice(0, PAGE_SIZE);
  const total = batch.dead + batch.held;
  const base = `/batches/${encodeURIComponent(batch.id)}`;
  const listQuery = (path: string) =>
    `${path}?${new URLSearchParams({ batch: batch.id, ...(ctx.kind === 'accounts' ? { kind: 'accounts' } : {}) }).toString()}`;
  const waitingOn =
    health === undefined || view === undefined
      ? []
      : describeHealth(
          health,
          { resume: `${services.kind.cli} resume`, worker: 'bulkorder worker' },
          { timeZone: ctx.timeZone },
        );
  const stalled =
    view !== undefined && (view.state !== 'closed' || view.degraded !== undefined || health?.paused === true);
  const body = h`
${stalled ? breakerBanner(bannerView(view, { waiting: undefined, burst: health?.burst ?? 0, pausedBy: health?.pausedBy }), ctx.timeZone) : ''}
${circuitLines.length === 0 ? '' : h`<div class="${circuit.state === 'held' ? 'breaker' : ''}" data-test="batch-circuit"><strong>Batch ${circuit.state}</strong>${circuitLines.map((line) => h`<br>${line}`)}${circuit.state === 'held' && ctx.canAct ? circuitForm(batch.id, circuit, ctx) : ''}</div>`}
${attention(batch) ? h`<p class="breaker" data-test="attention"><strong>Needs attention:</strong> ${batch.importState === 'failed' ? 'the import failed; ' : ''}${batch.dead} dead-lettered, ${batch.held} held for review, ${batch.rejected} rows rejected${batch.skippedHeld > 0 ? `, ${batch.skippedHeld} skipped as held` : ''}.</p>` : ''}
<table><tr><th style="width:160px">file</th><td>${batch.file}</td></tr><tr><th>sha256</th><td>${batch.sha256 || '-'}</td></tr>
<tr><th>started</th><td>${time(batch.startedAt, ctx.timeZone)}</td></tr><tr><th>state</th><td data-test="batch-state">${stateOf(batch)}</td></tr>
<tr><th>progress</th><td>${outcomeBar(batch)}</td></tr>
<tr><th>rows / orders</th><td>${batch.rows} rows, ${batch.orders} orders: ${batch.valid} valid, ${batch.rejected} rejected</td></tr>
<tr><th>queued</th><td>${batch.enqueued}; skipped ${batch.skippedDelivered} already delivered, ${batch.skippedHeld} held, ${batch.skippedQueued} queued elsewhere</td></tr>
<tr><th>outcomes</th><td data-test="outcomes"><span class="ok">${batch.delivered} delivered</span>, <span class="bad">${batch.dead} dead-lettered</span>, <span class="warn">${batch.held} held for review</span>${batch.resolved > 0 ? h`, <span class="ok">${batch.resolved} fixed since</span>` : ''}${batch.movedOn > 0 ? h`, ${batch.movedOn} passed on to a later batch` : ''}</td></tr>
<tr><th>files</th><td data-test="files">${filesCell(batch, files, (name) => `${base}/${name}${k}`)}</td></tr></table>
${fixesTable(fixes, ctx)}
${deadCauses.length === 0 ? '' : h`<h2>Dead-lettered by cause</h2>${causeTable(deadCauses, ctx, '/dead-letters', { batch: batch.id })}`}
${heldCauses.length === 0 ? '' : h`<h2>Held by cause</h2>${causeTable(heldCauses, ctx, '/held', { batch: batch.id })}`}
<h2>Problems${total > problems.length ? ` (the first ${problems.length} of ${total})` : ''}</h2>
<p>All of them: <a href="${listQuery('/dead-letters')}" data-test="batch-dead-link">dead letters of this batch</a> · <a href="${listQuery('/held')}">held orders of this batch</a> · delivered orders are listed in the results file.</p>
${problems.length === 0 && !settled ? notYet(batch, waitingOn) : parkedTable(problems, ctx)}`;
  // Followed live while it is being delivered (the upload page's Import opens it); not while a person
  // may be typing why they release or cancel a held batch (a reload would lose it).
  const acting = circuit.state === 'held' && ctx.canAct;
  return page(ctx, `Batch ${batch.id}`, body, isSettled(batch) || acting ? {} : { refreshSeconds: 3 });
}

/**
 * Release or cancel a held batch, as `batch release|cancel` does (who and why recorded on its circuit).
 * Only with actions allowed (a token, not --read-only); the server checks the form token again.
 */
function circuitForm(batchId: string, circuit: BatchCircuitView, ctx: PageContext): Safe {
  return h`<form method="post" action="/batches/${encodeURIComponent(batchId)}/circuit" data-test="circuit-form">${csrfField(ctx)}
<fieldset><legend>Act on this batch (${circuit.refusedCount} refused orders wait with it)</legend>
<label>why <input name="why" required size="40" data-test="circuit-why"></label>
<label>who <input name="by" size="16" placeholder="your basic-auth name"></label>
<button name="action" value="release" data-test="batch-release">Release: send the rest</button>
<button name="action" value="cancel" data-test="batch-cancel">Cancel: end it unsent</button></fieldset></form>`;
}

/** The circuit form's post: releases or cancels the batch; returns what to tell the person. */
export async function actOnBatchForm(
  target: DashboardTarget,
  batchId: string,
  form: { action: string | undefined; why: string | undefined; by: string },
): Promise<string> {
  if (form.action !== 'release' && form.action !== 'cancel') return `Unknown action '${form.action ?? ''}'.`;
  if (form.why === undefined || form.why.trim() === '') return 'Say why: releasing or cancelling records who and why.';
  const circuit = await readBatchCircuit(target.services.redis, target.services.keys, batchId);
  // Only a held batch: a second click, or a probe that resumed it meanwhile, changes nothing.
  if (circuit.state !== 'held') return `Batch ${batchId} is ${circuit.state} now, not held: nothing done.`;
  try {
    const after = await actOnBatch(target.services, batchId, form.action, { by: form.by, why: form.why.trim() });
    return form.action === 'release'
      ? `Released by ${form.by}: the rest of batch ${batchId} is sent, its ${circuit.refusedCount} refused orders again.`
      : `Cancelled by ${form.by}: every unsent order of batch ${batchId} ends as cancelled (${after.enqueued - after.delivered} not delivered); nothing more of it is sent.`;
  } catch (error) {
    if (!isBulkorderError(error)) throw error;
    return `Refused: ${error.message}`;
  }
}

/**
 * A batch still being delivered with nothing parked yet: not "None." while its orders wait on an
 * outage, but how many are still to come and what they wait for (breaker, pause, no worker).
 */
function notYet(batch: Batch, waitingOn: readonly string[]): Safe {
  const left = Math.max(0, batch.enqueued - batch.delivered - batch.dead - batch.held);
  const what =
    batch.importState === 'importing' ? 'still being imported' : `${left} of ${batch.enqueued} still to be delivered`;
  return h`<div class="${waitingOn.length === 0 ? '' : 'breaker'}" data-test="parked-empty"><p>None so far: ${what}.${waitingOn.length === 0 ? '' : ' They wait:'}</p>
${waitingOn.length === 0 ? '' : h`<ul data-test="waiting-on">${waitingOn.map((line) => h`<li>${line.trim()}</li>`)}</ul>`}</div>`;
}

/** The batch's downloads, or why there are none (yet). */
function filesCell(batch: Batch, files: { results?: string; rejects?: string }, href: (name: string) => string): Safe {
  return h`${resultsCell(batch, files, href)}${rejectsCell(batch, files, href)}`;
}

function resultsCell(batch: Batch, files: { results?: string }, href: (name: string) => string): Safe {
  if (files.results !== undefined)
    return h`<a href="${href('results.csv')}" title="${files.results}" data-test="results-link">results.csv</a> (every order and how it ended) `;
  if (batch.pendingResultsFile !== undefined)
    return h`<span data-test="results-pending">results: written to ${batch.pendingResultsFile} once the batch settles</span> `;
  if (batch.resultsFile !== undefined) return h`results: ${batch.resultsFile} (not on this host) `;
  return h`no results file (<code>import --wait</code> writes one; run it again to write it now: nothing is sent twice) `;
}

function rejectsCell(batch: Batch, files: { rejects?: string }, href: (name: string) => string): Safe {
  if (files.rejects !== undefined)
    return h`<a href="${href('rejects.csv')}" title="${files.rejects}" data-test="rejects-link">rejects.csv</a> (rejected rows with their reasons, to fix and import again)`;
  if (batch.rejectsFile !== undefined) return h`rejects: ${batch.rejectsFile} (not on this host)`;
  return h``;
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
