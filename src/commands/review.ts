import type { Command } from 'commander';
import { accountsAlias, loadCommandContext, withConfigFlags, withJsonOption, withJsonRefusal, withParkedFilters, type RecordKindName, type ReviewAction, type ReviewFlags, type SetExitCode } from './options.js';

/** Declares `review` under `parent` for one kind (`bulkorder review`, `bulkorder accounts review`). */
export function register(parent: Command, setExitCode: SetExitCode, kind: RecordKindName): void {
  const noun = kind === 'orders' ? 'order' : 'account';
  const group = parent
    .command('review')
    .summary(`${noun}s held for review (sent, no answer): list, release (send again) or resolve as delivered`)
    .description(
      'Orders held for review: they were sent but no answer came, so they may or may not exist on the service. ' +
        'Check each on the service, then either `release` it (it is not there: send it again) or ' +
        '`resolve --delivered` it (it is there: record it as delivered, never send it). Both are recorded in the ledger.',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  bulkorder review list\n  bulkorder review release ref.1001.GIFT-7 --wait --note "not in the portal"\n' +
        '  bulkorder review resolve ref.1001.GIFT-8 --delivered --remote-id ORD-4711',
    );

  const run = async (action: ReviewAction, args: string[], flags: ReviewFlags): Promise<void> => {
    const { runReview } = await import('./reviewRun.js');
    setExitCode(await withJsonRefusal(flags.json === true, { kind, action }, async () => runReview(kind, action, args, flags, await loadCommandContext(flags, { announce: action === 'release' }))));
  };
  const decided = (command: Command): Command =>
    command.option('--by <name>', 'who decided, recorded in the ledger (default: the OS user)').option('--note <text>', 'why, recorded in the ledger');

  withConfigFlags(withParkedFilters(group.command('list').description('list held orders, oldest first'), noun))
    .option('--limit <n>', 'show at most this many', '50')
    .option('--json', 'print JSON instead of a table')
    .action((flags: ReviewFlags) => run('list', [], flags));

  withConfigFlags(group.command('show').description('the order, its source lines and what happened').argument('<orderKey>'))
    .option('--json', 'print the record as JSON')
    .addOption(accountsAlias())
    .action((key: string, flags: ReviewFlags) => run('show', [key], flags));

  withJsonOption(withConfigFlags(decided(withParkedFilters(group.command('release').description('send held orders again (you checked they are not on the service)').argument('[orderKeys...]'), noun))), 'what was queued (with --wait: how it ended)')
    .option('--all', 'every held order (needed when no key or filter is given)')
    .option('--wait', 'follow the new batch until every order settles')
    .option('--timeout <seconds>', 'with --wait: stop following after this long')
    .action((keys: string[], flags: ReviewFlags) => run('release', keys, flags));

  withConfigFlags(decided(withParkedFilters(group.command('resolve').description('record held orders as delivered without sending them').argument('[orderKeys...]'), noun)))
    .option('--delivered', 'required: the order is on the service')
    .option('--remote-id <id>', "the service's order id, recorded in the ledger")
    .option('--all', 'every held order (needed when no key or filter is given)')
    .action((keys: string[], flags: ReviewFlags) => run('resolve', keys, flags));
}
