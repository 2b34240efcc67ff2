import type { Command } from 'commander';
import type { SetExitCode } from './index.js';
import { loadCommandContext, withConfigFlags, type ConfigFlags } from './context.js';
import type { ParkedFilterFlags } from '../deadLetter/parkedFilter.js';

/** The `dead-letters` subcommands. */
export type DeadLetterAction = 'list' | 'show' | 'export' | 'retry' | 'purge';

/** Flags of every `dead-letters` subcommand. */
export interface DeadLetterFlags extends ConfigFlags, ParkedFilterFlags {
  json?: boolean;
  limit?: string;
  out?: string;
  delimiter?: string;
  all?: boolean;
  wait?: boolean;
  timeout?: string;
}

/** Adds the filter flags `list`, `export`, `retry` and `purge` share. */
export function withParkedFilters(command: Command): Command {
  return command
    .option('--batch <id>', 'only orders parked by this batch')
    .option('--status <http>', "only this HTTP status (e.g. 422), or 'none' (no answer)")
    .option('--code <code>', 'only this error code (e.g. PRODUCT_UNKNOWN)')
    .option('--older-than <age>', 'only parked at least this long ago: 30m, 12h, 7d, 2w')
    .option('--newer-than <age>', 'only parked at most this long ago')
    .option('--accounts', 'employee accounts (Cafetariaplan API) instead of orders');
}

export function register(program: Command, setExitCode: SetExitCode): void {
  const group = program
    .command('dead-letters')
    .summary('list, show, export, retry or purge orders the API refused')
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
    setExitCode(await runDeadLetters(action, args, flags, await loadCommandContext(flags, { announce: action === 'retry' })));
  };

  withConfigFlags(withParkedFilters(group.command('list').description('list dead letters, oldest first')))
    .option('--limit <n>', 'show at most this many', '50')
    .option('--json', 'print JSON (one object per dead letter) instead of a table')
    .action((flags: DeadLetterFlags) => run('list', [], flags));

  withConfigFlags(group.command('show').description('the order, its source lines and the full error body').argument('<orderKey>'))
    .option('--json', 'print the record as JSON')
    .option('--accounts', 'an employee account (Cafetariaplan API) instead of an order')
    .action((key: string, flags: DeadLetterFlags) => run('show', [key], flags));

  withConfigFlags(withParkedFilters(group.command('export').description('write dead letters as CSV in their input format, plus error columns, to fix and import again')))
    .option('--out <file>', 'where to write (default dead-letters-<env>-<time>.csv); several input column sets: <name>-1.csv, <name>-2.csv')
    .option('--delimiter <char>', 'cell delimiter: "," (default), ";" or "tab"')
    .action((flags: DeadLetterFlags) => run('export', [], flags));

  withConfigFlags(withParkedFilters(group.command('retry').description('send dead letters again as they are, as a new batch').argument('[orderKeys...]')))
    .option('--all', 'every dead letter (needed when no key or filter is given)')
    .option('--wait', 'follow the new batch until every order settles')
    .option('--timeout <seconds>', 'with --wait: stop following after this long')
    .action((keys: string[], flags: DeadLetterFlags) => run('retry', keys, flags));

  withConfigFlags(withParkedFilters(group.command('purge').description('forget dead letters for good (their orders are not sent)').argument('[orderKeys...]')))
    .option('--all', 'every dead letter (needed when no key or filter is given)')
    .action((keys: string[], flags: DeadLetterFlags) => run('purge', keys, flags));
}
