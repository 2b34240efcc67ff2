import type { ValidationSummaryJson } from '../ingest/validationSummary.js';
import { EXIT_CODE_MEANINGS, ExitCode } from '../errors.js';
import { h, raw, type Safe } from './html.js';
import { kindQuery, page, type PageContext } from './layout.js';
import { formatBytes, type Upload } from './uploadSpool.js';
import { dashboardAdvice, withoutCliAdvice, type MappingNeed } from './uploadMapping.js';

/** What a checked upload's preview shows. */
export interface Preview {
  /** The check's counts, error and note kinds, first rejected lines. */
  summary: ValidationSummaryJson;
  /** A rejects CSV was written: the page links it. */
  rejectsReady: boolean;
  /** Columns left out, warnings, whether columns can be mapped. */
  facts: PreviewFacts;
}

/** A file refused as a whole: its code, message and exit code. */
export interface Refusal {
  code: string;
  message: string;
  /** Default ExitCode.fileRefused (3); a stop of the check itself gives its own. */
  exitCode?: ExitCode;
}

/** What the preview shows besides the counts: the columns left out and facts about how the file is read. */
export interface PreviewFacts {
  /** Columns no field uses (left out of the orders). */
  ignored: readonly string[];
  /** Facts about the file worth a look (e.g. no orderRef column), in the dashboard's words. */
  warnings: readonly string[];
  /** A CSV file: its columns can be mapped to fields. */
  mappable: boolean;
}

/**
 * Sends the chosen file as the request body (streamed to the spool, never held in the page),
 * with the form token in a header: the same CSRF and same-origin rules as every action.
 */
const UPLOAD_SCRIPT = raw(`<script>
const form = document.getElementById('upload');
const input = document.getElementById('file');
const zone = document.getElementById('drop');
const status = document.getElementById('upload-status');
async function send(file) {
  if (!file) return;
  status.textContent = 'Uploading ' + file.name + ' (' + file.size + ' bytes)…';
  const url = '/upload/file?' + new URLSearchParams({ name: file.name, kind: form.dataset.kind });
  const response = await fetch(url, { method: 'POST', body: file, headers: { 'x-bulkorder-form-token': form.dataset.csrf, 'content-type': 'application/octet-stream' } });
  const answer = await response.json().catch(() => ({ error: 'the dashboard gave no answer (' + response.status + ')' }));
  if (answer.next) location.assign(answer.next); else status.textContent = answer.error;
}
form.addEventListener('submit', (event) => { event.preventDefault(); send(input.files[0]); });
zone.addEventListener('dragover', (event) => { event.preventDefault(); zone.classList.add('over'); });
zone.addEventListener('dragleave', () => zone.classList.remove('over'));
zone.addEventListener('drop', (event) => { event.preventDefault(); zone.classList.remove('over'); send(event.dataTransfer.files[0]); });
</script>`);

/** `/upload`: pick or drop a CSV, JSON or NDJSON file. */
export function uploadPage(ctx: PageContext, maxBytes: number, savedMapping: boolean): string {
  const body = h`<p>Pick or drop ${ctx.kind === 'accounts' ? 'an employee' : 'an order'} file (CSV, JSON or NDJSON, up to ${formatBytes(maxBytes)}).
Every row is checked first and shown on a preview; nothing is sent until you press Import there.
${savedMapping ? 'The column mapping saved from an earlier file is applied.' : ''}</p>
<form id="upload" data-csrf="${ctx.csrf}" data-kind="${ctx.kind}">
<div id="drop" class="drop" data-test="drop">Drop a file here, or <input type="file" id="file" name="file" accept=".csv,.tsv,.txt,.json,.ndjson,.jsonl" data-test="file"> <button data-test="upload">Upload and check</button></div>
</form><p id="upload-status" role="status" data-test="upload-status"></p>
<style>.drop{border:2px dashed #9bb7f0;background:#fff;padding:28px;text-align:center}.drop.over{background:#e8f0fe}</style>${UPLOAD_SCRIPT}`;
  return page(ctx, 'Import a file', body);
}

/** The preview: counts, each error kind with its count, the first rejected lines, the notes, and Import. */
export function previewPage(ctx: PageContext, upload: Upload, preview: Preview): string {
  const { summary, rejectsReady, facts } = preview;
  const k = kindQuery(ctx.kind, '&');
  const base = `/upload/${encodeURIComponent(upload.id)}`;
  const nothing = summary.valid === 0;
  const mapping = Object.entries(upload.mapping ?? {});
  const body = h`<p>${upload.name} (${formatBytes(upload.bytes)})${mapping.length === 0 ? '' : h`, columns mapped: ${mapping.map(([header, field]) => (field === '' ? `${header} left out` : `${header} → ${field}`)).join(', ')}`}
${facts.mappable ? h` · <a href="${base}/mapping${kindQuery(ctx.kind)}" data-test="change-mapping">map columns</a>` : ''}</p>
${facts.ignored.length === 0 ? '' : h`<p data-test="ignored-columns">Columns left out (no field uses them): ${facts.ignored.join(', ')}.${facts.mappable ? h` <a href="${base}/mapping${kindQuery(ctx.kind)}">Map one to a field</a> if it holds one.` : ''}</p>`}
${facts.warnings.map((warning) => h`<p class="warn" data-test="warning">Note: ${warning}</p>`)}
<div class="cards" data-test="preview-counts">
<div class="card"><b>${summary.rows}</b>rows</div><div class="card"><b>${summary.orders}</b>${ctx.kind === 'accounts' ? 'accounts' : 'orders'}</div>
<div class="card"><b class="ok" data-test="valid">${summary.valid}</b>valid</div><div class="card"><b class="${summary.rejected > 0 ? 'bad' : ''}" data-test="rejected">${summary.rejected}</b>rejected</div></div>
${
  summary.errorKinds.length === 0
    ? h`<p class="ok">No row is rejected.</p>`
    : h`<h2>Rejected, by kind</h2><table data-test="error-kinds"><tr><th>code</th><th>field</th><th>count</th><th>what it means</th></tr>
${summary.errorKinds.map((e) => h`<tr><td>${e.code}</td><td>${e.column ?? '-'}</td><td>${e.count}</td><td>${e.description}</td></tr>`)}</table>
<h2>First rejected lines</h2><table data-test="first-errors"><tr><th>line</th><th>field</th><th>value (masked)</th><th>reason</th></tr>
${summary.firstErrors.map((e) => h`<tr><td>${e.line}</td><td>${e.column ?? '-'}</td><td>${e.value ?? ''}</td><td>${e.message}</td></tr>`)}</table>
${rejectsReady ? h`<p><a href="${base}/rejects.csv?x=1${k}" data-test="rejects-link">Download the rejected rows (rejects CSV)</a>: fix them there and upload that file.</p>` : ''}`
}
${
  summary.noteKinds.length === 0
    ? ''
    : h`<h2>Notes</h2><table data-test="notes"><tr><th>note</th><th>count</th><th>what it means</th></tr>
${summary.noteKinds.map((n) => h`<tr><td>${n.code}</td><td>${n.count}</td><td>${n.description}</td></tr>`)}</table>`
}
${
  ctx.canAct
    ? h`<form method="post" action="${base}/import" class="inline"><input type="hidden" name="_csrf" value="${ctx.csrf}"><input type="hidden" name="kind" value="${ctx.kind}">
<button data-test="import" ${nothing ? raw('disabled') : ''}>Import the ${summary.valid} valid ${ctx.kind === 'accounts' ? 'accounts' : 'orders'}</button></form>
<form method="post" action="${base}/discard" class="inline"><input type="hidden" name="_csrf" value="${ctx.csrf}"><input type="hidden" name="kind" value="${ctx.kind}"><button>Discard</button></form>`
    : ''
}`;
  return page(ctx, 'Preview', body);
}

/**
 * The mapping step: every field without a column (required ones marked *, optional ones such as
 * orderRef too), each with a choice among the file's columns, the likely one pre-selected; what is
 * matched already; and the columns no field uses, which are left out of the orders.
 */
export function mappingPage(ctx: PageContext, upload: Upload, need: MappingNeed, message?: string): string {
  const base = `/upload/${encodeURIComponent(upload.id)}`;
  const free = need.headers.filter((header) => need.ignored.includes(header));
  const select = (
    field: string,
    required: boolean,
  ): Safe => h`<tr><th><label for="map-${field}">${field}</label>${required ? ' *' : ''}</th><td>
<select id="map-${field}" name="map:${field}" data-test="map-${field}"><option value="">${required ? '- choose a column -' : '- none -'}</option>
${free.map((header) => h`<option value="${header}" ${need.suggestions[field] === header ? raw('selected') : ''}>${header}</option>`)}</select></td></tr>`;
  const matched = Object.entries(need.mapped);
  const body = h`${message === undefined ? '' : h`<p class="bad" data-test="refusal">${message}</p>`}
<p>Choose the column of ${upload.name} that holds each field (* required). The likely columns are pre-selected.</p>
<form method="post" action="${base}/mapping"><input type="hidden" name="_csrf" value="${ctx.csrf}"><input type="hidden" name="kind" value="${ctx.kind}">
<table data-test="mapping">${need.missing.map((field) => select(field, true))}${need.optional.map((field) => select(field, false))}</table>
<p data-test="ignored-columns">${free.length === 0 ? 'Every column of the file is used.' : `Columns no field uses, left out of the ${ctx.kind === 'accounts' ? 'accounts' : 'orders'} unless you choose them above: ${free.join(', ')}.`}</p>
${matched.length === 0 ? '' : h`<p><small>Matched already: ${matched.map(([field, header]) => `${field} ← ${header}`).join(', ')}.</small></p>`}
<label><input type="checkbox" name="save" value="yes" data-test="save-mapping"> save this mapping for the next file</label>
<p><button data-test="apply-mapping">Check again with this mapping</button></p></form>`;
  return page(ctx, 'Map the columns', body);
}

/** A file refused as a whole: the same code, message and exit-code meaning as the CLI. */
export function refusedPage(ctx: PageContext, name: string, refusal: Refusal): string {
  const { code, message, exitCode = ExitCode.fileRefused } = refusal;
  const body = h`<p class="bad" data-test="refusal"><b>${code}</b>: ${withoutCliAdvice(message)}</p>
<p data-test="advice">${dashboardAdvice(code)}</p>
<p>${exitCode === ExitCode.fileRefused ? 'The CLI refuses this file the same way' : 'The CLI stops the same way'}: exit ${exitCode} (${EXIT_CODE_MEANINGS[exitCode]}). Nothing was queued.</p>
<p><a href="/upload${kindQuery(ctx.kind)}">Upload another file</a></p>`;
  return page(ctx, `Refused: ${name}`, body);
}
