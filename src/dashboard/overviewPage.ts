import { basename } from 'node:path';
import { isSettled, needsAttention, type Batch } from '../batches/batchStore.js';
import { readDeliveryHealth } from '../services/deliveryControl.js';
import { readRedisSafety } from '../services/redisSafetyReport.js';
import { bannerView, breakerBanner } from './breakerBanner.js';
import { readBreakerView } from '../worker/breakerView.js';
import { listHeldBatches } from '../batches/batchCircuit.js';
import { dashboardSnapshot, type DashboardState } from './dashboardState.js';
import { h, type Safe } from './html.js';
import { activityChart } from './activityChart.js';
import { readMinuteStats } from '../metrics/minuteStats.js';
import { kindQuery, outcomeBar, page, time, type PageContext } from './layout.js';

/** `/`: environment, API, breaker, queue depth, live workers, parked counts and recent batches. */
export async function overviewPage(state: DashboardState, ctx: PageContext): Promise<string> {
  const target = state.targets[ctx.kind] ?? state.targets.orders;
  const services = target.services;
  const [snapshot, health, breaker, batches, activity, redis, heldBatches] = await Promise.all([
    dashboardSnapshot(state),
    // The same reading as `status` and `import --wait`: breaker, who paused, live workers (heartbeats).
    readDeliveryHealth(services, services.delivery.breaker.alertAfterMs),
    readBreakerView(services.redis, services.keys, services.delivery.breaker),
    target.services.batches.list(10),
    readMinuteStats(target.services),
    readRedisSafety(services),
    listHeldBatches(services.redis, services.keys),
  ]);
  const queue = snapshot?.queues.find((q) => q.api === (ctx.kind === 'orders' ? 'business' : 'cafetariaplan'));
  const [dead, held] = await Promise.all([target.dead.count(), target.held.count()]);
  const k = kindQuery(ctx.kind);
  const body = h`
${redis.unsafe ? h`<div class="breaker" data-test="redis-unsafe"><strong>Redis is unsafe for orders (${redis.code ?? ''})</strong>: ${redis.reason ?? ''}. Workers take no jobs until it is fixed; nothing is lost meanwhile.</div>` : h``}
${breakerBanner(bannerView(breaker, { waiting: queue === undefined ? undefined : queue.waiting + queue.delayed, burst: health.burst, pausedBy: health.pausedBy }), ctx.timeZone)}
${heldBatches.length === 0 ? h`` : h`<div class="breaker" data-test="held-batches"><strong>${heldBatches.length} batch${heldBatches.length === 1 ? '' : 'es'} held by their canary</strong> (their content, not the API: other batches go on)${heldBatches.map((c) => h`<br><a href="/batches/${encodeURIComponent(c.batchId)}${k}">${c.batchId}</a>: ${c.refusedCount} refused with ${c.cause ?? 'one cause'}; <code>${services.kind.cli} batch release|cancel ${c.batchId}</code>`)}</div>`}
<div class="cards">
 <div class="card">jobs waiting<b data-test="waiting">${queue?.waiting ?? '?'}</b></div>
 <div class="card">active<b>${queue?.active ?? '?'}</b></div>
 <div class="card">delayed<b>${queue?.delayed ?? '?'}</b></div>
 <div class="card">queue<b class="${queue?.paused === true ? 'bad' : 'ok'}">${queueState(queue)}</b></div>
 <div class="card"><a href="/dead-letters${k}">dead letters</a><b class="${dead > 0 ? 'bad' : ''}" data-test="dead-count">${dead}</b></div>
 <div class="card"><a href="/held${k}">held for review</a><b class="${held > 0 ? 'warn' : ''}" data-test="held-count">${held}</b></div>
</div>
${activityChart(activity.points, activity)}
<h2>Live workers (${health.workers.length})</h2>
${
  health.workers.length === 0
    ? h`<p class="warn">No worker is connected: queued ${ctx.kind === 'orders' ? 'orders' : 'accounts'} wait. Start <code>bulkorder worker</code>.</p>`
    : h`<table><tr><th>host</th><th>pid</th><th>concurrency</th><th>running since</th></tr>
${health.workers.map((w) => h`<tr><td>${w.host}</td><td>${w.pid}</td><td>${w.concurrency}</td><td>${time(w.since, ctx.timeZone)}</td></tr>`)}</table>`
}
<h2>Recent batches</h2>
${batchTable(batches, ctx)}`;
  return page(ctx, 'Overview', body, { refreshSeconds: 10 });
}

/** The batches table of the overview and the batches page. */
export function batchTable(batches: readonly Batch[], ctx: PageContext): Safe {
  if (batches.length === 0) return h`<p>No batches yet: <code>bulkorder import &lt;file&gt;</code>.</p>`;
  const k = kindQuery(ctx.kind);
  return h`<table data-test="batches"><tr><th>batch</th><th>file</th><th>sha256</th><th>started</th><th>state</th><th>progress <small class="legend"><span class="ok">■ delivered</span> <span class="bad">■ dead</span> <span class="warn">■ held</span> <span style="color:#7b5ea7">■ rejected</span></small></th><th>delivered</th><th>dead</th><th>held</th><th>rejected</th><th>skipped</th></tr>
${batches.map(
  (
    b,
  ) => h`<tr class="${attention(b) ? 'attention' : ''}" data-batch="${b.id}"><td>${attention(b) ? h`<span class="attention-mark" data-test="attention">needs attention</span><br>` : ''}<a href="/batches/${encodeURIComponent(b.id)}${k}">${b.id}</a></td><td title="${b.file}">${basename(b.file)}</td><td title="${b.sha256}">${b.sha256.slice(0, 12)}</td><td>${time(b.startedAt, ctx.timeZone)}</td>
<td>${stateOf(b)}</td><td>${outcomeBar(b)}</td><td class="ok">${b.delivered}</td><td class="${b.dead > 0 ? 'bad' : ''}">${b.dead}</td><td class="${b.held > 0 ? 'warn' : ''}">${b.held}</td><td>${b.rejected}</td><td>${b.skippedDelivered + b.skippedHeld + b.skippedQueued}</td></tr>`,
)}</table>`;
}

/** importing, delivering, settled or failed. */
export function stateOf(batch: Batch): string {
  if (batch.importState === 'failed') return 'import failed';
  if (batch.importState === 'importing') return 'importing';
  if (!isSettled(batch)) return 'delivering';
  return batch.dead + batch.held + batch.rejected > 0 ? 'settled, needs attention' : 'settled';
}

/** A batch a person must look at: its import failed, or it dead-lettered, held or rejected something. */
export function attention(batch: Batch): boolean {
  return batch.importState === 'failed' || needsAttention({ ...batch, conflicts: batch.conflicts });
}

/** The queue card's word: unknown when the queue could not be read. */
function queueState(queue: { paused: boolean } | undefined): string {
  if (queue === undefined) return '?';
  return queue.paused ? 'paused' : 'running';
}
