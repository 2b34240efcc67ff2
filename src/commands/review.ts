import type { Command } from 'commander';
import {
  declareParkedList,
  declareParkedShow,
  parkedRunner,
  parkedSelection,
  REQUEUE_EXIT_CODES,
  runAction,
  withAllOption,
  withConfigFlags,
  withExamples,
  withJsonOption,
  withRequeueOptions,
  type ParkedGroup,
  type RecordKindName,
  type CommandIo,
} from './options.js';
import { cliOf } from '../kinds/recordKind.js';
import type { ReviewAction, ReviewFlags } from './reviewRun.js';
import type { DuplicatesFlags } from './reviewRun.js';

/** The `review` group of one kind, its subcommands declared in it, with the sample keys its examples name. */
interface Review extends ParkedGroup<ReviewAction, ReviewFlags> {
  sampleKey: string;
  otherKey: string;
}

/** Declares `review` under `parent` for one kind (`bulkorder review`, `bulkorder accounts review`). */
export function register(parent: Command, io: CommandIo, kind: RecordKindName): void {
  const noun = kind === 'orders' ? 'order' : 'account';
  const group = parent
    .command('review')
    .summary(`${noun}s held for review (sent, no answer): list, release (send again), resolve as delivered, or purge`)
    .description(
      'Orders held for review: they were sent but no answer came, so they may or may not exist on the service. ' +
        'Check each on the service, then either `release` it (it is not there: send it again) or ' +
        '`resolve --delivered` it (it is there: record it as delivered, never send it). Both are recorded in the ledger.',
    );
  const cli = `${cliOf(kind)} review`;
  const [sampleKey, otherKey] =
    kind === 'orders' ? ['ref.1001.GIFT-7', 'ref.1001.GIFT-8'] : ['<account key>', '<account key>'];
  withExamples(group, [
    `${cli} list`,
    `${cli} release ${sampleKey} --wait --note "not in the portal"`,
    `${cli} resolve ${otherKey} --delivered --remote-id ORD-4711`,
    `${cli} purge --older-than 30d`,
  ]);
  const run = parkedRunner<ReviewAction, ReviewFlags>(io, kind, {
    announce: 'release',
    load: async () => (await import('./reviewRun.js')).runReview,
  });
  const parked: Review = { group, cli, noun, run, sampleKey, otherKey };
  declareParkedList(parked, {
    description: 'list held orders, oldest first',
    records: 'held order',
    examples: [`${cli} list`, `${cli} list --older-than 2h --json`],
  });
  declareParkedShow(parked, { description: 'the order, its source lines and what happened', sampleKey });
  declareRelease(parked);
  declareResolve(parked);
  declarePurge(parked);
  registerDuplicates(group, io, kind);
}

/** `--by` and `--note` of `release` and `resolve`: who decided and why, recorded in the ledger. */
function withDecision(command: Command): Command {
  return command
    .option('--by <name>', 'who decided, recorded in the ledger (default: the OS user)')
    .option('--note <text>', 'why, recorded in the ledger');
}

/** `review release`: sends the selected held orders again (checked not on the service). */
function declareRelease({ group, cli, noun, run, sampleKey }: Review): void {
  const command = withRequeueOptions(
    withJsonOption(
      withConfigFlags(
        withDecision(
          parkedSelection(
            { group, noun },
            'release',
            'send held orders again (you checked they are not on the service)',
          ),
        ),
      ),
      'what was queued (with --wait: how it ended)',
    ),
    'every held order',
  );
  withExamples(
    command,
    [
      `${cli} release ${sampleKey} --wait --note "not in the portal"`,
      `${cli} release --batch b-20261122T020000-1a2b3c --by anna`,
      `${cli} release --all --wait --timeout 600 --json`,
    ],
    REQUEUE_EXIT_CODES,
  ).action((keys: string[], flags: ReviewFlags) => run('release', keys, flags));
}

/** `review resolve --delivered`: records the selected held orders as delivered, never sending them. */
function declareResolve({ group, cli, noun, run, otherKey }: Review): void {
  const command = withAllOption(
    withConfigFlags(
      withDecision(parkedSelection({ group, noun }, 'resolve', 'record held orders as delivered without sending them')),
    )
      .option('--delivered', 'required: the order is on the service')
      .option('--remote-id <id>', "the service's order id, recorded in the ledger"),
    'every held order',
  );
  withExamples(
    command,
    [
      `${cli} resolve ${otherKey} --delivered --remote-id ORD-4711`,
      `${cli} resolve --batch b-20261122T020000-1a2b3c --delivered --note "all in the portal"`,
    ],
    'Exit codes: 0 resolved; 4 some were no longer held (the ledger has them in another state now); 2 --delivered missing, or no key, filter or --all.',
  ).action((keys: string[], flags: ReviewFlags) => run('resolve', keys, flags));
}

/** `review purge`: forgets the selected held orders' records; the ledger keeps them held. */
function declarePurge({ group, cli, noun, run, otherKey }: Review): void {
  const command = withAllOption(
    withJsonOption(
      withConfigFlags(
        parkedSelection(
          { group, noun },
          'purge',
          `forget held ${noun}s' records (the ${noun} and its personal data) for good; the ledger keeps them held, so nothing sends them`,
        ),
      ),
      'what was purged',
    ),
    'every held order',
  );
  withExamples(
    command,
    [`${cli} purge --older-than 30d`, `${cli} purge ${otherKey} --json`],
    'Exit codes: 0 purged (also when nothing matched); 2 no key, filter or --all; 5 Redis unavailable. To send an order again, release it before purging: a purged one stays held in the ledger until it expires (BULKORDER_LEDGER_RETENTION_DAYS).',
  ).action((keys: string[], flags: ReviewFlags) => run('purge', keys, flags));
}

/** `review duplicates list|ack`: orders delivered after an answer that left doubt (POSSIBLE_DUPLICATE). */
function registerDuplicates(group: Command, io: CommandIo, kind: RecordKindName): void {
  const cli = `${cliOf(kind)} review duplicates`;
  const duplicates = group
    .command('duplicates')
    .summary('possible duplicates (delivered after an attempt answered 5xx): list, acknowledge in bulk')
    .description(
      'Orders delivered after an earlier attempt was answered 5xx: the service may have stored that attempt too ' +
        '(POSSIBLE_DUPLICATE). Check them on the service, then `ack` them, per batch or all at once: who and why go ' +
        "into each batch's history of fixes, and they leave `open` and the dashboard's Needs a person page.",
    );
  withExamples(duplicates, [
    `${cli} list`,
    `${cli} ack --batch b-20261122T020000-1a2b3c --by anna --why "checked in the portal: no second copy"`,
  ]);
  const run = (action: 'list' | 'ack', keys: string[], flags: DuplicatesFlags): Promise<void> =>
    runAction(
      io,
      flags,
      {
        load: () => import('./reviewRun.js'),
        announce: false,
        json: flags.json === true,
        said: { kind, action: `duplicates ${action}` },
      },
      ({ runDuplicates }, ctx) => runDuplicates({ kind, action, keys, flags }, ctx),
    );
  const list = withConfigFlags(
    duplicates.command('list').description('list the possible duplicates not acknowledged yet, oldest first'),
  )
    .option('--batch <id>', 'only those the batch delivered')
    .option('--limit <n>', 'show at most this many', '50')
    .option(
      '--json',
      'print one JSON object: kind, batch, total, shown, duplicates (orderKey, batchId, at, cause), exitCode',
    );
  withExamples(
    list,
    [`${cli} list`, `${cli} list --batch b-20261122T020000-1a2b3c --json`],
    'Exit codes: 0 none to check; 4 some are flagged and not acknowledged; 5 Redis unavailable.',
  ).action((flags: DuplicatesFlags) => run('list', [], flags));
  const ack = withJsonOption(
    withConfigFlags(
      duplicates
        .command('ack')
        .description('acknowledge possible duplicates you checked (recorded with who, why and when)')
        .argument('[orderKeys...]'),
    ),
    'what was acknowledged',
  )
    .option('--batch <id>', 'every possible duplicate the batch delivered')
    .option('--all', 'every possible duplicate (needed when no key or --batch is given)')
    .option('--by <name>', "who checked, recorded in the batch's history (default: the OS user)")
    .option('--why <text>', "required: why they need nothing more, recorded in the batch's history");
  withExamples(
    ack,
    [
      `${cli} ack --batch b-20261122T020000-1a2b3c --by anna --why "no second copy in the portal"`,
      `${cli} ack --all --by anna --why "503s only: not processed"`,
    ],
    'Exit codes: 0 acknowledged (also when nothing matched); 2 --why missing, or no key, --batch or --all; 5 Redis unavailable.',
  ).action((keys: string[], flags: DuplicatesFlags) => run('ack', keys, flags));
}
