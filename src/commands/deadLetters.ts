import type { Command } from 'commander';
import { accountsAlias, loadCommandContext, withConfigFlags, withJsonOption, withJsonRefusal, withParkedFilters, type DeadLetterAction, type DeadLetterFlags, type RecordKindName, type SetExitCode } from './options.js';

/** Declares `dead-letters` under `parent` for one kind (`bulkorder dead-letters`, `bulkorder accounts dead-letters`). */
export function register(parent: Command, setExitCode: SetExitCode, kind: RecordKindName): void {
  const noun = kind === 'orders' ? 'order' : 'account';
  const group = parent
    .command('dead-letters')
    .summary(`list, show, export, retry or purge ${noun}s the API refused`)
    .description(
      'Orders the API refused (or that ran out of attempts), kept with the order, its source lines and the full answer ' +
        'until resolved or purged. Fix them by exporting, correcting the rows and importing the file again; or retry them ' +
        'as they are once a fault on the server side is fixed.',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  bulkorder dead-letters list --code PRODUCT_UNKNOWN\n  bulkorder dead-letters export --out fix-me.csv' +
        '   # fix the rows, then: bulkorder import fix-me.csv --wait\n  bulkorder dead-letters retry --status 503 --wait\n  bulkorder dead-letters purge --older-than 30d',
    );

  const run = async (action: DeadLetterAction, args: string[], flags: DeadLetterFlags): Promise<void> => {
    const { runDeadLetters } = await import('./deadLettersRun.js');
    setExitCode(await withJsonRefusal(flags.json === true, { kind, action }, async () => runDeadLetters(kind, action, args, flags, await loadCommandContext(flags, { announce: action === 'retry' }))));
  };

  withConfigFlags(withParkedFilters(group.command('list').description('list dead letters, oldest first'), noun))
    .option('--limit <n>', 'show at most this many', '50')
    .option('--json', 'print JSON (one object per dead letter) instead of a table')
    .action((flags: DeadLetterFlags) => run('list', [], flags));

  withConfigFlags(group.command('show').description('the order, its source lines and the full error body').argument('<orderKey>'))
    .option('--json', 'print the record as JSON')
    .addOption(accountsAlias())
    .action((key: string, flags: DeadLetterFlags) => run('show', [key], flags));

  withConfigFlags(withParkedFilters(group.command('export').description('write dead letters as CSV in their input format, plus error columns, to fix and import again'), noun))
    .option('--out <file>', 'where to write (default dead-letters-<env>-<time>.csv); several input column sets: <name>-1.csv, <name>-2.csv')
    .option('--delimiter <char>', 'cell delimiter: "," (default), ";" or "tab"')
    .action((flags: DeadLetterFlags) => run('export', [], flags));

  withJsonOption(withConfigFlags(withParkedFilters(group.command('retry').description('send dead letters again as they are, as a new batch').argument('[orderKeys...]'), noun)), 'what was queued (with --wait: how it ended)')
    .option('--all', 'every dead letter (needed when no key or filter is given)')
    .option('--wait', 'follow the new batch until every order settles')
    .option('--timeout <seconds>', 'with --wait: stop following after this long')
    .action((keys: string[], flags: DeadLetterFlags) => run('retry', keys, flags));

  withConfigFlags(withParkedFilters(group.command('purge').description('forget dead letters for good (their orders are not sent)').argument('[orderKeys...]'), noun))
    .option('--all', 'every dead letter (needed when no key or filter is given)')
    .action((keys: string[], flags: DeadLetterFlags) => run('purge', keys, flags));
}
