import { ExitCode, UsageError } from '../errors.js';
import { parkedFilterFromFlags, type ParkedFilterFlags } from '../deadLetter/parkedFilter.js';
import { releaseHeld } from '../review/releaseHeld.js';
import { resolveHeld } from '../review/resolveHeld.js';
import {
  acknowledgeDuplicates,
  duplicateCause,
  listDuplicates,
  type PossibleDuplicate,
} from '../batches/possibleDuplicates.js';
import { openServices } from '../services.js';
import { localTime } from '../timeText.js';
import { printRequeued, purgeSelected, runParked, type ParkedAct } from './parkedRun.js';
import { KINDS } from '../kinds/kindByName.js';
import {
  chosenKind,
  osUserName,
  positiveInteger,
  printReport,
  requireSelection,
  type CommandContext,
  type ConfigFlags,
  type ParkedRequest,
  type RecordKindName,
} from './options.js';

/** The `review` subcommands. */
export type ReviewAction = 'list' | 'show' | 'release' | 'resolve' | 'purge';

/** Flags of every `review` subcommand. */
export interface ReviewFlags extends ConfigFlags, ParkedFilterFlags {
  /** Deprecated alias of the `accounts` subcommand tree. */
  accounts?: boolean;
  json?: boolean;
  limit?: string;
  all?: boolean;
  wait?: boolean;
  timeout?: string;
  delivered?: boolean;
  remoteId?: string;
  by?: string;
  note?: string;
}

/** What to do next, in the words of the kind's commands (`bulkorder` or `bulkorder accounts`). */
const listHints = (cli: string, noun: string): string[] => [
  `details: ${cli} review show <${noun} key>`,
  `check each ${noun} on the service, then:`,
  `  not there: ${cli} review release <${noun} key>... [--wait]   (sends it again)`,
  `  there:     ${cli} review resolve <${noun} key>... --delivered [--remote-id ID]   (never sends it)`,
];

/** One `review` command as typed: the record kind, the action, its arguments and flags. */
export type ReviewRequest = ParkedRequest<ReviewAction, ReviewFlags>;

/** What release, purge and resolve act on: the held records' store and services, the selection, who decided. */
type ReviewAct = ParkedAct & {
  flags: ReviewFlags;
  /** Who decided and why (`--by`, `--note`). */
  review: { by: string; note?: string };
};

/** `bulkorder [accounts] review <action>`: returns the exit code. */
export async function runReview(request: ReviewRequest, ctx: CommandContext): Promise<number> {
  const { action, args, flags } = request;
  const filter = parkedFilterFromFlags(flags, action === 'show' ? [] : args);
  if (action === 'resolve' && flags.delivered !== true) {
    throw new UsageError(
      'RESOLVE_OUTCOME_MISSING',
      'review resolve: pass --delivered to record that the order is on the service (it is then never sent); to send it again use review release.',
    );
  }
  const review = { by: flags.by ?? osUserName(), ...(flags.note === undefined ? {} : { note: flags.note }) };
  const acts = {
    release: (act: ParkedAct & { flags: ReviewFlags }) => release({ ...act, review }),
    resolve: (act: ParkedAct & { flags: ReviewFlags }) => resolve({ ...act, review }),
    purge: (act: ParkedAct & { flags: ReviewFlags }) => purge({ ...act, review }),
  };
  return runParked('held', request, ctx, { filter, hints: listHints, acts });
}

async function release(act: ReviewAct): Promise<number> {
  const { store, services, filter, review, flags, ctx } = act;
  requireSelection(filter, flags, 'review release');
  const items = await store.select(filter);
  const { made, keptNothing } = await releaseHeld(items, review, services.pipeline(ctx.logger));
  return printRequeued(made, act, {
    action: 'review release',
    matched: items.length,
    by: review.by,
    keptNothing,
  });
}

async function purge(act: ReviewAct): Promise<number> {
  const noun = act.services.kind.noun;
  return purgeSelected('held', act, {
    action: 'review purge',
    decided: act.review,
    text: (purged) =>
      `purged ${purged} held ${noun}${purged === 1 ? '' : 's'}: their records (the ${noun} and its personal data) are gone; ` +
      `the ledger keeps each key held, so no import sends it again until it expires (BULKORDER_LEDGER_RETENTION_DAYS)\n`,
  });
}

async function resolve({ store, services, filter, review, flags, ctx }: ReviewAct): Promise<number> {
  requireSelection(filter, flags, 'review resolve');
  const items = await store.select(filter);
  const outcomes = await resolveHeld(items, services.ledger, {
    ...review,
    ...(flags.remoteId === undefined ? {} : { remoteId: flags.remoteId }),
  });
  const resolved = outcomes.filter((o) => o.outcome === 'resolved');
  const lines = [`resolved as delivered by ${review.by}: ${resolved.length} order${resolved.length === 1 ? '' : 's'}`];
  for (const o of outcomes)
    if (o.outcome !== 'resolved') lines.push(`  ${o.key}: not resolved, the ledger has it ${o.outcome} now`);
  if (items.length === 0) lines.push('nothing matched: no held order changed');
  ctx.stdout.write(lines.join('\n') + '\n');
  return resolved.length === outcomes.length ? ExitCode.ok : ExitCode.needsAttention;
}

/** Flags of `review duplicates list` and `review duplicates ack`. */
export interface DuplicatesFlags extends ConfigFlags {
  /** Deprecated alias of the `accounts` subcommand tree. */
  accounts?: boolean;
  json?: boolean;
  batch?: string;
  all?: boolean;
  limit?: string;
  by?: string;
  why?: string;
}

/** One `review duplicates` command as typed. */
export interface DuplicatesRequest {
  kind: RecordKindName;
  action: 'list' | 'ack';
  /** ack: order keys (none: --batch or --all chooses). */
  keys: string[];
  flags: DuplicatesFlags;
}

/**
 * `bulkorder [accounts] review duplicates list|ack`: the possible duplicates not acknowledged yet (list: exit 0 when
 * none, 4 when some), and their acknowledgement in bulk, recorded in each batch's history of fixes (ack: exit 0).
 */
export async function runDuplicates(request: DuplicatesRequest, ctx: CommandContext): Promise<number> {
  const { kind, action, keys, flags } = request;
  const why = flags.why?.trim() ?? '';
  if (action === 'ack') {
    if (why === '')
      throw new UsageError(
        'DUPLICATE_ACK_WHY_MISSING',
        'review duplicates ack: say why with --why "..." (recorded with who decided, in the batch\'s history)',
      );
    if (keys.length === 0 && flags.batch === undefined && flags.all !== true)
      throw new UsageError(
        'SELECTION_MISSING',
        'review duplicates ack: name order keys, give --batch <id>, or pass --all.',
      );
  }
  const services = await openServices(
    ctx.config,
    KINDS[chosenKind(kind, flags)],
    action === 'list' ? { allowEviction: true } : {},
  );
  const store = { redis: services.redis, keys: services.keys, retentionMs: services.ledger.retentionMs };
  const cli = `${services.kind.cli} review duplicates`;
  try {
    const now = Date.now();
    const found = await listDuplicates(store, { now, ...(flags.batch === undefined ? {} : { batchId: flags.batch }) });
    if (action === 'list') {
      const limit = positiveInteger(flags.limit ?? '50', '--limit');
      const shown = found.slice(0, limit);
      const lines = [
        found.length === 0
          ? 'No possible duplicates to check: none flagged, or every one acknowledged.'
          : `${found.length} possible duplicate${found.length === 1 ? '' : 's'} (delivered after an attempt answered 5xx: the service may hold a second copy), oldest first:`,
        ...shown.map(
          (d) =>
            `  ${d.orderKey}  batch ${d.batchId || '-'}  delivered ${localTime(d.at, ctx.config.timeZone)}  ${duplicateCause(d)}`,
        ),
      ];
      if (found.length > shown.length) lines.push(`  ... and ${found.length - shown.length} more (--limit)`);
      if (found.length > 0)
        lines.push(
          '',
          'check each on the service for a second copy (cancel the copy there if there is one), then:',
          `  ${cli} ack --batch <batch id> --by <who> --why "checked, no second copy"   (or --all, or order keys)`,
        );
      const json = {
        kind: services.kind.name,
        batch: flags.batch ?? null,
        total: found.length,
        shown: shown.length,
        duplicates: shown.map((d) => ({ ...d, at: new Date(d.at).toISOString(), cause: duplicateCause(d) })),
      };
      return printReport(
        ctx.stdout,
        { text: lines.join('\n') + '\n', json, exitCode: found.length === 0 ? ExitCode.ok : ExitCode.needsAttention },
        flags.json === true,
      );
    }
    const wanted = new Set(keys);
    const chosen: PossibleDuplicate[] = keys.length === 0 ? found : found.filter((d) => wanted.has(d.orderKey));
    const by = flags.by ?? osUserName();

    const taken = await acknowledgeDuplicates(store, chosen, { by, why }, now);
    const missing = keys.filter((key) => !chosen.some((d) => d.orderKey === key));
    const text =
      `acknowledged by ${by}: ${taken} possible duplicate${taken === 1 ? '' : 's'} (recorded in ${
        new Set(chosen.map((d) => d.batchId)).size
      } batch${new Set(chosen.map((d) => d.batchId)).size === 1 ? "'s" : "es'"} history: ${why})\n` +
      (missing.length > 0 ? `not flagged (left alone): ${missing.join(', ')}\n` : '');
    const json = {
      kind: services.kind.name,
      action: 'review duplicates ack',
      by,
      why,
      acknowledged: chosen.map((d) => ({ orderKey: d.orderKey, batchId: d.batchId })),
      missing,
    };
    return printReport(ctx.stdout, { text, json, exitCode: ExitCode.ok }, flags.json === true);
  } finally {
    await services.close();
  }
}
