import { userInfo } from 'node:os';
import { ExitCode, UsageError } from '../errors.js';
import { parkedFilterFromFlags, type ParkedFilterFlags } from '../deadLetter/parkedFilter.js';
import { reportRequeued } from '../deadLetter/followRequeued.js';
import { releaseHeld } from '../review/releaseHeld.js';
import { resolveHeld } from '../review/resolveHeld.js';
import { listParked, openParked, showParked } from '../deadLetter/parkedActions.js';
import { KINDS } from '../kinds/kindByName.js';
import {
  chosenKind,
  positiveInteger,
  printReport,
  requireSelection,
  type CommandContext,
  type RecordKindName,
  type ConfigFlags,
} from './options.js';

/** The `review` subcommands. */
export type ReviewAction = 'list' | 'show' | 'release' | 'resolve';

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

/** `bulkorder [accounts] review <action>`: returns the exit code. */
export async function runReview(
  kind: RecordKindName,
  action: ReviewAction,
  args: string[],
  flags: ReviewFlags,
  ctx: CommandContext,
): Promise<number> {
  const filter = parkedFilterFromFlags(flags, action === 'show' ? [] : args);
  if (action === 'resolve' && flags.delivered !== true) {
    throw new UsageError(
      'RESOLVE_OUTCOME_MISSING',
      'review resolve: pass --delivered to record that the order is on the service (it is then never sent); to send it again use review release.',
    );
  }
  const review = { by: flags.by ?? safeUserName(), ...(flags.note === undefined ? {} : { note: flags.note }) };
  const { services, store } = await openParked(ctx.config, KINDS[chosenKind(kind, flags)], 'held');
  try {
    switch (action) {
      case 'list':
        ctx.stdout.write(
          await listParked(
            store,
            filter,
            { json: flags.json === true, limit: positiveInteger(flags.limit ?? '50', '--limit') },
            listHints(services.kind.cli, services.kind.noun),
          ),
        );
        return ExitCode.ok;
      case 'show':
        ctx.stdout.write(await showParked(store, services, args[0]!, { json: flags.json === true }));
        return ExitCode.ok;
      case 'release': {
        requireSelection(filter, flags, 'review release');
        const items = await store.select(filter);
        const made = await releaseHeld(items, review, services.pipeline(ctx.logger));
        const report = await reportRequeued(made, services.batches, {
          wait: flags.wait === true,
          out: ctx.stderr,
          ...(flags.timeout === undefined ? {} : { timeoutMs: positiveInteger(flags.timeout, '--timeout') * 1000 }),
        });
        const json = {
          kind: services.kind.name,
          action: 'review release',
          releasedBy: review.by,
          matched: items.length,
          batches: report.batches,
        };
        return printReport(
          ctx.stdout,
          { text: [`released by ${review.by}`, ...report.lines].join('\n') + '\n', json, exitCode: report.exitCode },
          flags.json === true,
        );
      }
      case 'resolve': {
        requireSelection(filter, flags, 'review resolve');
        const items = await store.select(filter);
        const outcomes = await resolveHeld(items, services.ledger, {
          ...review,
          ...(flags.remoteId === undefined ? {} : { remoteId: flags.remoteId }),
        });
        const resolved = outcomes.filter((o) => o.outcome === 'resolved');
        const lines = [
          `resolved as delivered by ${review.by}: ${resolved.length} order${resolved.length === 1 ? '' : 's'}`,
        ];
        for (const o of outcomes)
          if (o.outcome !== 'resolved') lines.push(`  ${o.key}: not resolved, the ledger has it ${o.outcome} now`);
        if (items.length === 0) lines.push('nothing matched: no held order changed');
        ctx.stdout.write(lines.join('\n') + '\n');
        return resolved.length === outcomes.length ? ExitCode.ok : ExitCode.needsAttention;
      }
    }
  } finally {
    await services.close();
  }
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
