import type { Command } from 'commander';
import {
  accountsAlias,
  loadCommandContext,
  withConfigFlags,
  withExamples,
  withJsonOption,
  withJsonRefusal,
  withParkedFilters,
  type RecordKindName,
  type CommandIo,
} from './options.js';
import type { ReviewAction, ReviewFlags } from './reviewRun.js';

/** Declares `review` under `parent` for one kind (`bulkorder review`, `bulkorder accounts review`). */
export function register(parent: Command, io: CommandIo, kind: RecordKindName): void {
  const noun = kind === 'orders' ? 'order' : 'account';
  const group = parent
    .command('review')
    .summary(`${noun}s held for review (sent, no answer): list, release (send again) or resolve as delivered`)
    .description(
      'Orders held for review: they were sent but no answer came, so they may or may not exist on the service. ' +
        'Check each on the service, then either `release` it (it is not there: send it again) or ' +
        '`resolve --delivered` it (it is there: record it as delivered, never send it). Both are recorded in the ledger.',
    );
  const cli = `${kind === 'orders' ? 'bulkorder' : 'bulkorder accounts'} review`;
  const [sampleKey, otherKey] =
    kind === 'orders' ? ['ref.1001.GIFT-7', 'ref.1001.GIFT-8'] : ['<account key>', '<account key>'];
  withExamples(group, [
    `${cli} list`,
    `${cli} release ${sampleKey} --wait --note "not in the portal"`,
    `${cli} resolve ${otherKey} --delivered --remote-id ORD-4711`,
  ]);

  const run = async (action: ReviewAction, args: string[], flags: ReviewFlags): Promise<void> => {
    const { runReview } = await import('./reviewRun.js');
    io.setExitCode(
      await withJsonRefusal(io.stdout, flags.json === true, { kind, action }, async () =>
        runReview(kind, action, args, flags, await loadCommandContext(flags, io, { announce: action === 'release' })),
      ),
    );
  };
  const decided = (command: Command): Command =>
    command
      .option('--by <name>', 'who decided, recorded in the ledger (default: the OS user)')
      .option('--note <text>', 'why, recorded in the ledger');

  const list = withConfigFlags(
    withParkedFilters(group.command('list').description('list held orders, oldest first'), noun),
  )
    .option('--limit <n>', 'show at most this many', '50')
    .option('--json', 'print JSON instead of a table');
  withExamples(list, [`${cli} list`, `${cli} list --older-than 2h --json`]).action((flags: ReviewFlags) =>
    run('list', [], flags),
  );

  const show = withConfigFlags(
    group.command('show').description('the order, its source lines and what happened').argument('<orderKey>'),
  )
    .option('--json', 'print the record as JSON')
    .addOption(accountsAlias());
  withExamples(show, [`${cli} show ${sampleKey}`, `${cli} show ${sampleKey} --json`]).action(
    (key: string, flags: ReviewFlags) => run('show', [key], flags),
  );

  const release = withJsonOption(
    withConfigFlags(
      decided(
        withParkedFilters(
          group
            .command('release')
            .description('send held orders again (you checked they are not on the service)')
            .argument('[orderKeys...]'),
          noun,
        ),
      ),
    ),
    'what was queued (with --wait: how it ended)',
  )
    .option('--all', 'every held order (needed when no key or filter is given)')
    .option('--wait', 'follow the new batch until every order settles')
    .option('--timeout <seconds>', 'with --wait: stop following after this long');
  withExamples(
    release,
    [
      `${cli} release ${sampleKey} --wait --note "not in the portal"`,
      `${cli} release --batch b-20261122T020000-1a2b3c --by anna`,
      `${cli} release --all --wait --timeout 600 --json`,
    ],
    'Exit codes: 0 queued (with --wait: every one delivered); 4 some were dead-lettered or held again, or --timeout ended the waiting; 2 no key, filter or --all; 5 Redis unavailable.',
  ).action((keys: string[], flags: ReviewFlags) => run('release', keys, flags));

  const resolve = withConfigFlags(
    decided(
      withParkedFilters(
        group
          .command('resolve')
          .description('record held orders as delivered without sending them')
          .argument('[orderKeys...]'),
        noun,
      ),
    ),
  )
    .option('--delivered', 'required: the order is on the service')
    .option('--remote-id <id>', "the service's order id, recorded in the ledger")
    .option('--all', 'every held order (needed when no key or filter is given)');
  withExamples(
    resolve,
    [
      `${cli} resolve ${otherKey} --delivered --remote-id ORD-4711`,
      `${cli} resolve --batch b-20261122T020000-1a2b3c --delivered --note "all in the portal"`,
    ],
    'Exit codes: 0 resolved; 4 some were no longer held (the ledger has them in another state now); 2 --delivered missing, or no key, filter or --all.',
  ).action((keys: string[], flags: ReviewFlags) => run('resolve', keys, flags));
}
