import { defined, ExitCode } from '../errors.js';
import { keptNothingText } from '../review/releaseHeld.js';
import { listParked, openParked, showParked, type ParkedTarget } from '../deadLetter/parkedActions.js';
import type { ParkedFilter } from '../deadLetter/parkedFilter.js';
import type { ParkedStore } from '../deadLetter/parkedStore.js';
import type { RequeueBatch } from '../deadLetter/requeueParked.js';
import { reportRequeued } from '../deadLetter/followRequeued.js';
import type { ParkedKind } from '../keyspace.js';
import type { Services } from '../services.js';
import { KINDS } from '../kinds/kindByName.js';
import type { TextSink } from '../textSink.js';
import {
  chosenKind,
  positiveInteger,
  printReport,
  requireSelection,
  type CommandContext,
  type ParkedRequest,
} from './options.js';

/** What `list` and `show` of `dead-letters` and `review` need besides the open store. */
export interface ParkedRead {
  filter: ParkedFilter;
  /** The key `show` prints. */
  key: string | undefined;
  flags: { limit?: string; json?: boolean };
  /** What to do next, printed under the list. */
  hints: readonly string[];
}

/** `list` and `show` as `dead-letters` and `review` both run them: prints, returns the exit code. */
async function readParked(
  action: 'list' | 'show',
  { services, store }: ParkedTarget,
  read: ParkedRead,
  stdout: TextSink,
): Promise<number> {
  const json = read.flags.json === true;
  if (action === 'list') {
    const listed = await listParked(
      store,
      read.filter,
      { kind: services.kind.name, limit: positiveInteger(read.flags.limit ?? '50', '--limit') },
      read.hints,
    );
    return printReport(stdout, { ...listed, exitCode: ExitCode.ok }, json);
  }
  stdout.write(await showParked(store, services, defined(read.key, 'the key parked show names'), { json }));
  return ExitCode.ok;
}

function isRead(action: string): action is 'list' | 'show' {
  return action === 'list' || action === 'show';
}

/**
 * Runs one `dead-letters` or `review` action on one kind's parked records of `state`: opens them, runs
 * `list` and `show` itself (`hints` in the words of the kind's commands), runs any other action with `acts`,
 * and closes them again. Returns the exit code.
 */
export async function runParked<A extends string, F extends ParkedRead['flags'] & { accounts?: boolean }>(
  state: ParkedKind,
  request: ParkedRequest<A, F>,
  ctx: CommandContext,
  how: {
    filter: ParkedFilter;
    hints: (cli: string, noun: string) => string[];
    /** Every other action: what it does with the open records, the selection and the command. */
    acts: Record<Exclude<A, 'list' | 'show'>, (act: ParkedAct & { flags: F }) => Promise<number>>;
  },
): Promise<number> {
  const { kind, action, args, flags } = request;
  const target = await openParked(ctx.config, KINDS[chosenKind(kind, flags)], state);
  const { services, store } = target;
  try {
    if (isRead(action)) {
      const hints = how.hints(services.kind.cli, services.kind.noun);
      return await readParked(action, target, { filter: how.filter, key: args[0], flags, hints }, ctx.stdout);
    }
    const act = how.acts[action as Exclude<A, 'list' | 'show'>];
    return await act({ store, services, filter: how.filter, flags, ctx });
  } finally {
    await services.close();
  }
}

/** How `dead-letters retry` and `review release` follow what they queued again: --wait, --timeout (seconds). */
function requeueFollow(
  flags: { wait?: boolean; timeout?: string },
  out: TextSink,
): { wait: boolean; timeoutMs?: number; out: TextSink } {
  return {
    wait: flags.wait === true,
    out,
    ...(flags.timeout === undefined ? {} : { timeoutMs: positiveInteger(flags.timeout, '--timeout') * 1000 }),
  };
}

/** What `retry`, `release` and `purge` act on: the open store and services, the selection, the command. */
export interface ParkedAct {
  store: ParkedStore;
  services: Services<unknown>;
  /** The records selected (flags and keys). */
  filter: ParkedFilter;
  flags: { json?: boolean; all?: boolean; wait?: boolean; timeout?: string };
  ctx: CommandContext;
}

/**
 * Follows (with --wait) and prints what `dead-letters retry` or `review release` queued again:
 * lines for a person (after `released by <by>` when someone decided), or one JSON object.
 */
export async function printRequeued(
  made: readonly RequeueBatch[],
  { services, flags, ctx }: ParkedAct,
  told: { action: string; matched: number; by?: string; keptNothing?: readonly string[] },
): Promise<number> {
  const report = await reportRequeued(made, services.batches, requeueFollow(flags, ctx.stderr));
  const keptNothing = told.keptNothing ?? [];
  const json = {
    kind: services.kind.name,
    action: told.action,
    ...(told.by === undefined ? {} : { releasedBy: told.by }),
    matched: told.matched,
    batches: report.batches,
    ...(keptNothing.length === 0 ? {} : { keptNothing }),
  };
  const lines = told.by === undefined ? report.lines : [`released by ${told.by}`, ...report.lines];
  if (keptNothing.length > 0) lines.push(keptNothingText(keptNothing, services.kind.noun));
  // Held orders left held need a person: exit 4, as a batch that needs attention.
  const exitCode = keptNothing.length > 0 ? ExitCode.needsAttention : report.exitCode;
  return printReport(ctx.stdout, { text: lines.join('\n') + '\n', json, exitCode }, flags.json === true);
}

/**
 * `dead-letters purge` and `review purge`: forgets the selected records of one state (`decided`: who, for the
 * batch's history of fixes); `text` says what that meant.
 */
export async function purgeSelected(
  state: ParkedKind,
  { store, services, filter, flags, ctx }: ParkedAct,
  told: { action: string; decided: { by: string; note?: string }; text: (purged: number) => string },
): Promise<number> {
  requireSelection(filter, flags, told.action);
  const items = await store.select(filter);
  const purged = await services.ledger.purgeParked(
    state,
    items.map((item) => item.record.key),
    told.decided,
  );
  const json = { kind: services.kind.name, action: told.action, matched: items.length, purged };
  return printReport(ctx.stdout, { text: told.text(purged), json, exitCode: ExitCode.ok }, flags.json === true);
}
