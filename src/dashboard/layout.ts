import { maskValue } from '../ingest/maskValue.js';
import { localTimeOr } from '../timeText.js';
import type { Caller } from './dashboardAuth.js';
import type { TargetKind } from './dashboardState.js';
import { h, raw, type Safe } from './html.js';

/** What every page needs to know about the request. */
export interface PageContext {
  env: string;
  apiUrl: string | undefined;
  /** Actions are shown and accepted (authenticated, not --read-only). */
  canAct: boolean;
  /** Why actions are not offered, when they are not. */
  readOnlyReason: string | undefined;
  caller: Caller;
  csrf: string;
  kind: TargetKind;
  hasAccounts: boolean;
  /** The operator's time zone (BULKORDER_TIMEZONE): every time on a page is shown in it, with its offset. */
  timeZone: string;
  flash?: string;
}

const STYLE = raw(`
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2433;background:#f6f7f9}
header{background:#1d2433;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
header a{color:#cfd8ff;text-decoration:none}header a:hover{text-decoration:underline}
.env{padding:3px 10px;border-radius:3px;font-weight:700;background:#2f7d32}.env.production{background:#c62828}
main{padding:16px;max-width:1320px;box-sizing:border-box}
table{border-collapse:collapse;width:100%;background:#fff;margin:8px 0 16px}
th,td{border-bottom:1px solid #e3e6eb;padding:5px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#eef0f4;font-weight:600;overflow-wrap:normal}
tr.attention td:first-child{box-shadow:inset 4px 0 #c62828}.attention-mark{color:#fff;background:#c62828;border-radius:3px;padding:0 5px;font-size:12px;white-space:nowrap}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{background:#fff;border:1px solid #e3e6eb;border-radius:4px;padding:10px 14px;min-width:120px}
.card b{display:block;font-size:22px}.bad{color:#c62828}.ok{color:#2f7d32}.warn{color:#b26a00}
.bar{display:inline-block;width:160px;height:10px;background:#e3e6eb;border-radius:5px;overflow:hidden;vertical-align:middle}
.bar{display:inline-flex}.bar span{display:block;height:100%}.bar .delivered{background:#2f7d32}.bar .dead{background:#c62828}.bar .held{background:#e0a030}.bar .rejected{background:#7b5ea7}
.legend span{white-space:nowrap}.pager{margin:8px 0}
.flash{background:#e8f0fe;border:1px solid #9bb7f0;padding:8px 12px;margin-bottom:12px}
.readonly{background:#fff4e5;border:1px solid #f0c27b;padding:6px 12px;margin-bottom:12px}
.breaker{background:#fdecea;border:1px solid #f5a3a0;padding:8px 12px;margin:8px 0}
form.inline{display:inline}button{cursor:pointer}pre{background:#fff;border:1px solid #e3e6eb;padding:8px;overflow:auto}
input,select{font:inherit}select{max-width:36em}p{overflow-wrap:anywhere}fieldset{border:1px solid #e3e6eb;background:#fff;margin:8px 0}
`);

/** The page frame: environment banner (production in red), navigation, notices. */
export function page(ctx: PageContext, title: string, body: Safe, options: { refreshSeconds?: number } = {}): string {
  const k = kindQuery(ctx.kind);
  return h`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · bulkorder</title>
${options.refreshSeconds === undefined ? '' : raw(`<meta http-equiv="refresh" content="${options.refreshSeconds}">`)}
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head><body>
<header><strong>bulkorder</strong><span class="env ${ctx.env === 'production' ? 'production' : ''}" data-test="env">${ctx.env.toUpperCase()}</span>
<span>API: ${ctx.apiUrl ?? 'not configured'}</span>
<a href="/">Overview</a><a href="/open${k}" data-test="nav-open">Needs a person</a>${ctx.canAct ? h`<a href="/upload${k}" data-test="nav-upload">Import a file</a>` : ''}<a href="/batches${k}">Batches</a><a href="/dead-letters${k}">Dead letters</a><a href="/held${k}">Held for review</a><a href="/schedules">Schedules</a>
${ctx.hasAccounts ? h`<a href="/batches?kind=${ctx.kind === 'orders' ? 'accounts' : 'orders'}">${ctx.kind === 'orders' ? 'Employee accounts' : 'Orders'}</a>` : ''}
<form action="/search" method="get" class="inline"><input name="q" placeholder="order key or orderRef" size="26" aria-label="search"> <button>Search</button></form></header>
<main>
${ctx.flash === undefined ? '' : h`<div class="flash" role="status">${ctx.flash}</div>`}
${ctx.readOnlyReason === undefined ? '' : h`<div class="readonly">Read-only: ${ctx.readOnlyReason}</div>`}
<h1>${title}${ctx.kind === 'accounts' ? ' (employee accounts)' : ''}</h1>
${body}
</main></body></html>`.value;
}

/** `?kind=accounts`, or nothing for orders. */
export function kindQuery(kind: TargetKind, prefix = '?'): string {
  return kind === 'accounts' ? `${prefix}kind=accounts` : '';
}

/** The hidden CSRF field of every action form. */
export function csrfField(ctx: PageContext): Safe {
  return h`<input type="hidden" name="_csrf" value="${ctx.csrf}"><input type="hidden" name="kind" value="${ctx.kind}">`;
}

/** A time on a page: in the operator's zone with its offset (`2026-11-22 03:00:00 +01:00`), `-` when unknown. */
export function time(ms: number | undefined, timeZone: string): string {
  return localTimeOr(ms, timeZone, '-');
}

/** A batch's counts as the outcome bar reads them. */
export interface BarCounts {
  enqueued: number;
  delivered: number;
  dead: number;
  held: number;
  rejected: number;
  /** Dead letters and held orders fixed or passed on since (they ended, however they were fixed). */
  resolved: number;
  movedOn: number;
  importState: string;
}

const SEGMENTS = ['delivered', 'dead', 'held', 'rejected'] as const;

/**
 * A batch's progress split by outcome (no script: styled spans): delivered green, dead-lettered
 * red, held amber, rejected rows purple, the rest (still queued) the empty track. A failed import
 * says so instead of a bar, however much it queued.
 */
export function outcomeBar(b: BarCounts): Safe {
  const total = b.enqueued + b.rejected;
  const done = b.delivered + b.dead + b.held + b.resolved + b.movedOn;
  if (b.importState === 'failed')
    return h`<span class="bad" data-test="bar">import failed</span> ${done}/${b.enqueued} queued ended`;
  const width = (n: number) => (total === 0 ? 0 : Math.round((n / total) * 1000) / 10);
  const title = SEGMENTS.map((s) => `${b[s]} ${s}`).join(', ');
  return h`<span class="bar" data-test="bar" title="${title}">${SEGMENTS.map((s) => (b[s] === 0 ? '' : h`<span class="${s}" style="width:${width(b[s])}%"></span>`))}</span> ${done}/${b.enqueued}`;
}

/** A "next page" link for cursor paging, keeping the page's other query parameters. */
export function pager(
  path: string,
  query: Record<string, string | undefined>,
  next: string | undefined,
  first: boolean,
): Safe {
  const keep = Object.entries(query).filter(
    (e): e is [string, string] => e[1] !== undefined && e[1] !== '' && e[0] !== 'after',
  );
  const link = (extra: [string, string][]) => `${path}?${new URLSearchParams([...keep, ...extra]).toString()}`;
  const lastPage = first ? '' : '· last page';
  return h`<p class="pager" data-test="pager">${first ? '' : h`<a href="${link([])}">first page</a> `}${next === undefined ? lastPage : h`<a href="${link([['after', next]])}" data-test="next-page">next ${PAGE_SIZE} →</a>`}</p>`;
}

/** Rows on a page of every list. */
export const PAGE_SIZE = 50;

/** The recipient of an order (or the employee of an account) masked as the CLI masks it: lists never show personal data. */
export function maskedWho(payload: unknown): string {
  const flat = flatten(payload);
  const name = [flat.firstName, flat.lastName]
    .filter((v): v is string => typeof v === 'string')
    .map((v, i) => maskValue(i === 0 ? 'firstName' : 'lastName', v));
  const email = typeof flat.email === 'string' ? maskValue('email', flat.email) : '';
  return [name.join(' '), email].filter((s) => s !== '').join(', ');
}

function flatten(value: unknown, into: Record<string, unknown> = {}): Record<string, unknown> {
  if (value === null || typeof value !== 'object') return into;
  for (const [k, v] of Object.entries(value)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v, into);
    else into[k] ??= v;
  }
  return into;
}
