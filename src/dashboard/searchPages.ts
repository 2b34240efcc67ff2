import type { DashboardState, DashboardTarget } from './dashboardState.js';
import { h, type Safe } from './html.js';
import { page, time, type PageContext } from './layout.js';
import { foundNoFile } from '../schedule/runScheduledImport.js';
import type { LastRun } from '../schedule/scheduleStore.js';

/** One search hit: a key the ledger or a parked store knows. */
interface Hit {
  kind: DashboardTarget['kind'];
  key: string;
  state: string;
  batchId: string;
}

/** SCAN pages looked at per search: bounds the work on a large Redis. */
const MAX_SCAN_CALLS = 200;

/**
 * `/search?q=`: an order key (exact), or an orderRef across every batch: the ledger keys
 * `ref.<customer>.<orderRef>` for any customer, and parked records carrying that orderRef.
 */
export async function searchPage(state: DashboardState, ctx: PageContext, q: string): Promise<string> {
  const hits: Hit[] = [];
  const seen = new Set<string>();
  for (const target of Object.values(state.targets)) {
    const add = (key: string, entryState: string, batchId: string) => {
      if (seen.has(`${target.kind}:${key}`)) return;
      seen.add(`${target.kind}:${key}`);
      hits.push({ kind: target.kind, key, state: entryState, batchId });
    };
    const exact = await target.services.ledger.get(q);
    if (exact !== undefined) add(q, exact.state, exact.batchId);
    if (/^[A-Za-z0-9._~-]{1,64}$/.test(q)) {
      const keys = await scanKeys(target, `${target.services.keys.ledger('ref.')}*.${q}`);
      const entries = await target.services.ledger.getMany(keys);
      keys.forEach((key, i) => {
        const entry = entries[i];
        if (entry !== undefined) add(key, entry.state, entry.batchId);
      });
    }
    for (const store of [target.dead, target.held]) {
      for await (const { record, entry } of store.scan()) {
        if (record.orderRef === q || record.key === q) add(record.key, entry?.state ?? record.kind, record.batchId);
      }
    }
  }
  const body = h`<p>${hits.length} found for <code>${q}</code> (order key, or orderRef across all batches).</p>
${
  hits.length === 0
    ? ''
    : h`<table data-test="hits"><tr><th>key</th><th>kind</th><th>ledger state</th><th>batch</th></tr>
${hits.map((hit) => h`<tr><td><a href="/orders/${encodeURIComponent(hit.key)}${hit.kind === 'accounts' ? '?kind=accounts' : ''}">${hit.key}</a></td><td>${hit.kind}</td><td>${hit.state}</td><td>${hit.batchId}</td></tr>`)}</table>`
}`;
  return page(ctx, 'Search', body);
}

async function scanKeys(target: DashboardTarget, pattern: string): Promise<string[]> {
  const prefix = target.services.keys.ledger('');
  const found: string[] = [];
  let cursor = '0';
  let calls = 0;
  do {
    const [next, keys] = await target.services.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys.map((k) => k.slice(prefix.length)));
  } while (cursor !== '0' && ++calls < MAX_SCAN_CALLS && found.length < 100);
  return found;
}

/** `/schedules`: each schedule with its next and last firing. */
export async function schedulesPage(state: DashboardState, ctx: PageContext): Promise<string> {
  const schedules = await state.schedules.list();
  const body =
    schedules.length === 0
      ? h`<p>No schedules. <code>bulkorder schedule set nightly --cron "0 2 * * *" --source /srv/exports</code></p>`
      : h`<table data-test="schedules"><tr><th>name</th><th>cron</th><th>time zone</th><th>source</th><th>next</th><th>last firing</th></tr>
${schedules.map(
  (
    s,
  ) => h`<tr><td>${s.name}</td><td>${s.cron}</td><td>${s.tz ?? 'local'}</td><td>${s.source}</td><td>${time(s.next, ctx.timeZone)}</td>
<td>${lastRunCell(s.lastRun, ctx.timeZone)}</td></tr>`,
)}</table>`;
  return page(ctx, 'Schedules', body);
}

/** A schedule's last firing: never, a source that named no file, or its state and the files it imported. */
function lastRunCell(run: LastRun | undefined, timeZone: string): Safe | string {
  if (run === undefined) return 'never (or no longer kept)';
  if (run.result !== undefined && foundNoFile(run.result))
    return h`${time(run.finishedAt, timeZone)}: <span class="warn">no file</span> (the source named none; nothing imported)`;
  return h`${time(run.finishedAt, timeZone)}: ${run.state}${run.failedReason === undefined ? '' : ` (${run.failedReason})`}
${run.result === undefined ? '' : run.result.files.map((f) => h`<br>${f.file}: ${'refused' in f ? h`<span class="bad">refused: ${f.refused}</span>` : h`<a href="/batches/${encodeURIComponent(f.batchId)}">${f.batchId}</a>, ${f.enqueued} queued${f.rejected > 0 ? h`, <span class="bad" data-test="schedule-rejected">${f.rejected} rejected</span>` : ''}${(f.conflicts ?? 0) > 0 ? h`, <span class="bad">${f.conflicts ?? 0} not sent: ORDER_REF_REUSED</span>` : ''}`}`)}`;
}
