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
import type { DeadLetterAction, DeadLetterFlags } from './deadLettersRun.js';

/** Declares `dead-letters` under `parent` for one kind (`bulkorder dead-letters`, `bulkorder accounts dead-letters`). */
export function register(parent: Command, io: CommandIo, kind: RecordKindName): void {
  const noun = kind === 'orders' ? 'order' : 'account';
  const group = parent
    .command('dead-letters')
    .summary(`list, show, export, retry or purge ${noun}s the API refused`)
    .description(
      'Orders the API refused (or that ran out of attempts), kept with the order, its source lines and the full answer ' +
        'until resolved or purged. Fix them by exporting, correcting the rows and importing the file again; or retry them ' +
        'as they are once a fault on the server side is fixed.',
    );
  const cli = `${kind === 'orders' ? 'bulkorder' : 'bulkorder accounts'} dead-letters`;
  withExamples(group, [
    `${cli} list --code PRODUCT_UNKNOWN`,
    `${cli} export --out fix-me.csv   # fix the rows, then import fix-me.csv --wait`,
    `${cli} retry --status 503 --wait`,
    `${cli} purge --older-than 30d`,
  ]);

  const run = async (action: DeadLetterAction, args: string[], flags: DeadLetterFlags): Promise<void> => {
    const { runDeadLetters } = await import('./deadLettersRun.js');
    io.setExitCode(
      await withJsonRefusal(io.stdout, flags.json === true, { kind, action }, async () =>
        runDeadLetters(
          kind,
          action,
          args,
          flags,
          await loadCommandContext(flags, io, { announce: action === 'retry' }),
        ),
      ),
    );
  };

  const list = withConfigFlags(
    withParkedFilters(group.command('list').description('list dead letters, oldest first'), noun),
  )
    .option('--limit <n>', 'show at most this many', '50')
    .option('--json', 'print JSON (one object per dead letter) instead of a table');
  withExamples(list, [
    `${cli} list`,
    `${cli} list --status 422 --newer-than 12h`,
    `${cli} list --batch b-20261122T020000-1a2b3c --json`,
  ]).action((flags: DeadLetterFlags) => run('list', [], flags));

  const show = withConfigFlags(
    group.command('show').description('the order, its source lines and the full error body').argument('<orderKey>'),
  )
    .option('--json', 'print the record as JSON')
    .addOption(accountsAlias());
  const sampleKey = kind === 'orders' ? 'ref.1001.GIFT-7' : '<account key>';
  withExamples(show, [`${cli} show ${sampleKey}`, `${cli} show ${sampleKey} --json`]).action(
    (key: string, flags: DeadLetterFlags) => run('show', [key], flags),
  );

  const exportCommand = withConfigFlags(
    withParkedFilters(
      group
        .command('export')
        .description('write dead letters as CSV in their input format, plus error columns, to fix and import again'),
      noun,
    ),
  )
    .option(
      '--out <file>',
      'where to write (default dead-letters-<env>-<time>.csv); several input column sets: <name>-1.csv, <name>-2.csv',
    )
    .option('--delimiter <char>', 'cell delimiter: "," (default), ";" or "tab"');
  withExamples(exportCommand, [
    `${cli} export --out fix-me.csv`,
    `${cli} export --code PRODUCT_UNKNOWN --delimiter ";" --out fix-me.csv`,
  ]).action((flags: DeadLetterFlags) => run('export', [], flags));

  const retry = withJsonOption(
    withConfigFlags(
      withParkedFilters(
        group
          .command('retry')
          .description('send dead letters again as they are, as a new batch')
          .argument('[orderKeys...]'),
        noun,
      ),
    ),
    'what was queued (with --wait: how it ended)',
  )
    .option('--all', 'every dead letter (needed when no key or filter is given)')
    .option('--wait', 'follow the new batch until every order settles')
    .option('--timeout <seconds>', 'with --wait: stop following after this long');
  withExamples(
    retry,
    [
      `${cli} retry --status 503 --wait`,
      `${cli} retry --code UPSTREAM_BROKEN --older-than 1h`,
      `${cli} retry --all --wait --timeout 600 --json`,
    ],
    'Exit codes: 0 queued (with --wait: every one delivered); 4 some were dead-lettered or held again, or --timeout ended the waiting; 2 no key, filter or --all; 5 Redis unavailable.',
  ).action((keys: string[], flags: DeadLetterFlags) => run('retry', keys, flags));

  const purge = withConfigFlags(
    withParkedFilters(
      group
        .command('purge')
        .description('forget dead letters for good (their orders are not sent)')
        .argument('[orderKeys...]'),
      noun,
    ),
  ).option('--all', 'every dead letter (needed when no key or filter is given)');
  withExamples(purge, [
    `${cli} purge --older-than 30d`,
    `${cli} purge --code PRODUCT_UNKNOWN --batch b-20261122T020000-1a2b3c`,
  ]).action((keys: string[], flags: DeadLetterFlags) => run('purge', keys, flags));
}
