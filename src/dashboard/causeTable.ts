import { causeId } from '../deadLetter/parkedFilter.js';
import type { ParkedCause } from '../deadLetter/parkedCauses.js';
import { h, type Safe } from './html.js';
import { csrfField, time, type PageContext } from './layout.js';

/**
 * Dead letters or held orders grouped by cause (HTTP status, code, message) with a count each; a
 * group links to its records, and dead-letter groups carry their own retry, export and purge
 * (purge asks again on a page of its own). `scope` is the page's other filter (a batch).
 */
export function causeTable(
  causes: readonly ParkedCause[],
  ctx: PageContext,
  path: '/dead-letters' | '/held',
  scope: Record<string, string | undefined>,
): Safe {
  const dead = path === '/dead-letters';
  const fields = (cause: ParkedCause): [string, string][] => [
    ...Object.entries(scope).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
    ['cause', causeId(cause)],
    ...(ctx.kind === 'accounts' ? [['kind', 'accounts'] as [string, string]] : []),
  ];
  const href = (base: string, cause: ParkedCause) => `${base}?${new URLSearchParams(fields(cause)).toString()}`;
  return h`<table data-test="causes"><tr><th style="width:70px">count</th><th style="width:70px">HTTP</th><th style="width:200px">code</th><th>message</th><th style="width:170px">last</th><th style="width:${dead && ctx.canAct ? 330 : 150}px"></th></tr>
${causes.map(
  (
    cause,
  ) => h`<tr data-cause="${causeId(cause)}"><td><b data-test="cause-count">${cause.count}</b></td><td>${cause.httpStatus ?? 'none'}</td><td>${cause.code ?? '-'}</td><td>${cause.message ?? '-'}</td><td>${time(cause.lastAt, ctx.timeZone)}</td>
<td><a href="${href(path, cause)}" data-test="cause-list">list</a>${dead ? h` · <a href="${href('/dead-letters/export.csv', cause)}">export CSV</a>` : ''}
${
  dead && ctx.canAct
    ? h`<form method="post" action="/dead-letters/action" class="inline">${csrfField(ctx)}${fields(cause)
        .filter(([name]) => name !== 'kind')
        .map(([name, value]) => h`<input type="hidden" name="${name}" value="${value}">`)}
<button name="action" value="retry-matching" data-test="cause-retry">Retry ${cause.count}</button> <button name="action" value="purge-matching" data-test="cause-purge">Purge…</button></form>`
    : ''
}</td></tr>`,
)}</table>`;
}
