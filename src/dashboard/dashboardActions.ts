import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acknowledgeDuplicates, listDuplicates } from '../batches/possibleDuplicates.js';
import { exportDeadLetters } from '../deadLetter/exportDeadLetters.js';
import type { CsvDialect } from '../ingest/csvDialect.js';
import { parkedFilterFromFlags, type ParkedFilter } from '../deadLetter/parkedFilter.js';
import { retryDeadLetters } from '../deadLetter/retryDeadLetters.js';
import { keptNothingText, releaseHeld } from '../review/releaseHeld.js';
import { resolveHeld } from '../review/resolveHeld.js';
import type { RequeueBatch } from '../deadLetter/requeueParked.js';
import type { DashboardTarget } from './dashboardState.js';
import type { FilterFields } from './parkedPages.js';
import { h, raw } from './html.js';
import { csrfField, page, type PageContext } from './layout.js';
import { defined } from '../errors.js';

/** A form post: which records (checked keys, or everything the filter matches) and what to do. */
export interface ActionForm extends FilterFields {
  action: string;
  keys: string[];
  note?: string;
  by: string;
  remoteId?: string;
}

/**
 * Runs one dashboard action through the same code as the CLI (src/deadLetter, src/review) and
 * returns what to tell the person. Bad filter values throw the CLI's UsageError.
 */
export async function runAction(target: DashboardTarget, form: ActionForm): Promise<string> {
  const [verb, scope] = form.action.split('-', 2) as [string, string | undefined];
  const filter: ParkedFilter = scope === 'selected' ? { keys: form.keys } : parkedFilterFromFlags(form);
  if (scope === 'selected' && form.keys.length === 0) return 'Nothing selected: tick the orders first.';
  const ledger = target.services.ledger;
  switch (verb) {
    case 'retry': {
      const items = (await target.dead.select(filter)).filter(
        (item) => item.entry === undefined || item.entry.state === 'dead',
      );
      return requeued('retried', await retryDeadLetters(items, target.requeue));
    }
    case 'purge': {
      const items = await target.dead.select(filter);
      const purged = await ledger.purgeParked(
        'dead',
        items.map((item) => item.record.key),
        review(form),
      );
      return `Purged ${purged} dead letter${purged === 1 ? '' : 's'}; they were not sent (importing them again sends them).`;
    }
    case 'release': {
      const items = await target.held.select(filter);
      const { made, keptNothing } = await releaseHeld(items, review(form), target.requeue);
      const unsent = keptNothingText(keptNothing, target.requeue.kind.noun);
      if (unsent === '') return requeued(`released by ${form.by}`, made);
      return made.length === 0 ? `${unsent}.` : `${requeued(`released by ${form.by}`, made)} ${unsent}.`;
    }
    case 'resolve': {
      const items = await target.held.select(filter);
      const outcomes = await resolveHeld(items, ledger, {
        ...review(form),
        ...(form.remoteId === undefined ? {} : { remoteId: form.remoteId }),
      });
      const resolved = outcomes.filter((o) => o.outcome === 'resolved').length;
      const moved = outcomes.filter((o) => o.outcome !== 'resolved').map((o) => `${o.key} is ${o.outcome} now`);
      return `Resolved as delivered by ${form.by}: ${resolved}.${moved.length === 0 ? '' : ` Not resolved: ${moved.join('; ')}.`}`;
    }
    default:
      return `Unknown action '${form.action}'.`;
  }
}

/** The possible duplicates' form of "Needs a person": one batch's or all, as the page listed them. */
export interface DuplicatesAckForm {
  /** Only this batch's; all when undefined. */
  batch?: string;
  /** The newest delivery time (ms) the page listed: duplicates flagged after it was drawn stay open. */
  until?: number;
  /** Required: an acknowledgement without a reason is refused. */
  why: string | undefined;
  by: string;
}

/**
 * Acknowledges possible duplicates as `review duplicates ack` does (src/batches/possibleDuplicates.ts): off the
 * index, who and why in each batch's history of fixes. Returns what to tell the person.
 */
export async function acknowledgeDuplicatesForm(target: DashboardTarget, form: DuplicatesAckForm): Promise<string> {
  const why = form.why?.trim() ?? '';
  if (why === '') return "Say why: acknowledging records who and why in the batch's history of fixes.";
  const { redis, keys, ledger } = target.services;
  const store = { redis, keys, retentionMs: ledger.retentionMs };
  const now = Date.now();
  const found = await listDuplicates(store, { now, ...(form.batch === undefined ? {} : { batchId: form.batch }) });
  // Only what the person saw: one flagged while they read the page is checked on its own.
  const { until } = form;
  const seen = until === undefined ? found : found.filter((d) => d.at <= until);
  const taken = await acknowledgeDuplicates(store, seen, { by: form.by, why }, now);
  const newer = found.length - seen.length;
  return `Acknowledged by ${form.by}: ${taken} possible duplicate${taken === 1 ? '' : 's'}${form.batch === undefined ? '' : ` of batch ${form.batch}`}, recorded in the batch's history of fixes.${newer === 0 ? '' : ` ${newer} flagged since the page was drawn stay open.`}`;
}

/** Dead letters matching the filter as the CLI's export writes them; with several column sets, file `part` (1-based). */
export async function exportCsv(
  target: DashboardTarget,
  filter: ParkedFilter,
  part: number,
): Promise<{ csv: Buffer; parts: number; dialect: CsvDialect } | undefined> {
  const items = await target.dead.select(filter);
  if (items.length === 0) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-export-'));
  try {
    const files = await exportDeadLetters(items, target.services.batches, {
      outPath: join(dir, 'dead-letters.csv'),
      csvOutput: target.services.files.csv,
      rebuild: target.services.kind.rebuildRows,
    });
    const file = defined(files[Math.min(Math.max(part, 1), files.length) - 1], 'a part of the export');
    return { csv: await readFile(file.path), parts: files.length, dialect: file.dialect };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The step before a purge: how many dead letters the form would purge and a button that posts it
 * again with `confirm=yes` (the CSRF token and filter carried along), or back to the list.
 */
export async function purgeConfirmPage(target: DashboardTarget, ctx: PageContext, form: ActionForm): Promise<string> {
  const selected = form.action === 'purge-selected';
  const fields = Object.entries(pickFilter(form)).filter((e): e is [string, string] => e[1] !== undefined);
  const count = selected
    ? form.keys.length
    : (await target.dead.causes(parkedFilterFromFlags(pickFilter(form)))).reduce((sum, c) => sum + c.count, 0);
  const back = `/dead-letters?${new URLSearchParams([...fields, ...(ctx.kind === 'accounts' ? [['kind', 'accounts'] as [string, string]] : [])]).toString()}`;
  const body = h`<div class="breaker" data-test="purge-confirm"><p><strong>Purge ${count} dead letter${count === 1 ? '' : 's'}?</strong>
They are not sent, and their records (the payload and source rows) are gone for good; importing the orders again sends them.</p>
${fields.length === 0 ? '' : h`<p>Filter: ${fields.map(([name, value]) => `${name}=${value}`).join(', ')}</p>`}
<form method="post" action="/dead-letters/action">${csrfField(ctx)}<input type="hidden" name="confirm" value="yes"><input type="hidden" name="action" value="${form.action}">
${fields.map(([name, value]) => h`<input type="hidden" name="${name}" value="${value}">`)}${form.keys.map((key) => h`<input type="hidden" name="keys" value="${key}">`)}
<button data-test="purge-confirmed" ${count === 0 ? raw('disabled') : ''}>Purge ${count}</button> <a href="${back}" data-test="purge-cancel">Cancel</a></form></div>`;
  return page(ctx, 'Purge dead letters?', body);
}

function pickFilter(form: ActionForm): FilterFields {
  const { batch, status, code, olderThan, newerThan, cause } = form;
  return Object.fromEntries(
    Object.entries({ batch, status, code, olderThan, newerThan, cause }).filter(([, v]) => v !== undefined),
  );
}

function review(form: ActionForm): { by: string; note?: string } {
  return { by: form.by, ...(form.note === undefined ? {} : { note: form.note }) };
}

function requeued(what: string, made: readonly RequeueBatch[]): string {
  if (made.length === 0) return 'Nothing matched: nothing was queued.';
  return made
    .map((b) => {
      const skipped = b.counts.skippedDelivered + b.counts.skippedHeld + b.counts.skippedQueued;
      return `${what}: ${b.counts.enqueued} queued again as batch ${b.batchId}${skipped === 0 ? '' : `, ${skipped} skipped (delivered, held or queued meanwhile)`}.`;
    })
    .join(' ');
}
