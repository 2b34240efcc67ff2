import type { Command } from 'commander';
import {
  declareParkedList,
  declareParkedShow,
  parkedRunner,
  parkedSelection,
  REQUEUE_EXIT_CODES,
  withAllOption,
  withConfigFlags,
  withExamples,
  withJsonOption,
  withParkedFilters,
  withRequeueOptions,
  type ParkedGroup,
  type RecordKindName,
  type CommandIo,
} from './options.js';
import { cliOf } from '../kinds/recordKind.js';
import type { DeadLetterAction, DeadLetterFlags } from './deadLettersRun.js';

/** The `dead-letters` group of one kind, its subcommands declared in it. */
type DeadLetters = ParkedGroup<DeadLetterAction, DeadLetterFlags>;

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
  const cli = `${cliOf(kind)} dead-letters`;
  withExamples(group, [
    `${cli} list --code PRODUCT_UNKNOWN`,
    `${cli} export --out fix-me.csv   # fix the rows, then import fix-me.csv --wait`,
    `${cli} retry --status 503 --wait`,
    `${cli} purge --older-than 30d`,
  ]);
  const run = parkedRunner<DeadLetterAction, DeadLetterFlags>(io, kind, {
    announce: 'retry',
    load: async () => (await import('./deadLettersRun.js')).runDeadLetters,
  });
  const parked: DeadLetters = { group, cli, noun, run };
  declareParkedList(parked, {
    description: 'list dead letters, oldest first',
    records: 'dead letter',
    examples: [
      `${cli} list`,
      `${cli} list --status 422 --newer-than 12h`,
      `${cli} list --batch b-20261122T020000-1a2b3c --json`,
    ],
  });
  declareParkedShow(parked, {
    description: 'the order, its source lines and the full error body',
    sampleKey: kind === 'orders' ? 'ref.1001.GIFT-7' : '<account key>',
  });
  declareExport(parked);
  declareRetry(parked);
  declarePurge(parked);
}

/** `dead-letters export`: the selected dead letters as CSV in their input format, to fix and import again. */
function declareExport({ group, cli, noun, run }: DeadLetters): void {
  const command = withConfigFlags(
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
    .option(
      '--delimiter <char>',
      'cell delimiter: ",", ";", "|" or "tab" (default: the input\'s own, else BULKORDER_OUTPUT_DELIMITER)',
    );
  withExamples(command, [
    `${cli} export --out fix-me.csv`,
    `${cli} export --code PRODUCT_UNKNOWN --delimiter ";" --out fix-me.csv`,
  ]).action((flags: DeadLetterFlags) => run('export', [], flags));
}

/** `dead-letters retry`: sends the selected dead letters again as they are, as a new batch. */
function declareRetry({ group, cli, noun, run }: DeadLetters): void {
  const command = withRequeueOptions(
    withJsonOption(
      withConfigFlags(parkedSelection({ group, noun }, 'retry', 'send dead letters again as they are, as a new batch')),
      'what was queued (with --wait: how it ended)',
    ),
    'every dead letter',
  );
  withExamples(
    command,
    [
      `${cli} retry --status 503 --wait`,
      `${cli} retry --code UPSTREAM_BROKEN --older-than 1h`,
      `${cli} retry --all --wait --timeout 600 --json`,
    ],
    REQUEUE_EXIT_CODES,
  ).action((keys: string[], flags: DeadLetterFlags) => run('retry', keys, flags));
}

/** `dead-letters purge`: forgets the selected dead letters for good. */
function declarePurge({ group, cli, noun, run }: DeadLetters): void {
  const command = withAllOption(
    withJsonOption(
      withConfigFlags(
        parkedSelection({ group, noun }, 'purge', 'forget dead letters for good (their orders are not sent)'),
      ),
      'what was purged',
    ),
    'every dead letter',
  );
  withExamples(
    command,
    [`${cli} purge --older-than 30d`, `${cli} purge --code PRODUCT_UNKNOWN --batch b-20261122T020000-1a2b3c --json`],
    'Exit codes: 0 purged (also when nothing matched); 2 no key, filter or --all; 5 Redis unavailable. Importing a purged order again sends it.',
  ).action((keys: string[], flags: DeadLetterFlags) => run('purge', keys, flags));
}
