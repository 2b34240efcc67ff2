import type { Command } from 'commander';
import { runAction, withConfigFlags, withExamples, type CommandIo, type RecordKindName } from './options.js';
import { cliOf } from '../kinds/recordKind.js';
import type { OpenFlags } from './openRun.js';

/** Declares `open` (and `open ack`) under `parent` for one kind (`bulkorder open`, `bulkorder accounts open`). */
export function register(parent: Command, io: CommandIo, kind: RecordKindName): void {
  const cli = cliOf(kind);
  const open = parent
    .command('open')
    .summary('what still needs a person: dead letters, held orders, refused files, grouped by cause, oldest first')
    .description(
      'Everything still open across batches, grouped by cause, oldest first, each with the action that resolves it. ' +
        'A fix closes what it fixed (a dead letter retried or superseded by a fixed row, a released or resolved hold, ' +
        'a refused file imported again), so a night is done when this list is empty. Exit 0: nothing open; 4: something is.',
    )
    .option('--json', 'print one JSON object: total, counts, groups (each with its items), acknowledged, exitCode')
    .option('--all', 'list every item of each group (default: the oldest 5)')
    .option('--by <name>', 'ack: who decided (default: the OS user)')
    .option('--note <text>', 'ack: why the item needs nothing more (required)');
  withExamples(open, [
    `${cli} open`,
    `${cli} open --json`,
    `${cli} open ack dead:ref.1001.A-7 --note "customer cancelled; nothing to send"`,
  ]);
  withConfigFlags(open)
    .argument(
      '[ack]',
      '`ack` followed by item ids: acknowledge them (recorded with who and why; a possible duplicate is closed as `review duplicates ack` does, listed under `closed`)',
    )
    .argument('[ids...]', 'the ids to acknowledge, as `open` lists them')
    .action(async (ack: string | undefined, ids: string[], flags: OpenFlags) => {
      await runAction(
        io,
        flags,
        {
          load: () => import('./openRun.js'),
          announce: false,
          json: flags.json === true,
          said: { kind, action: ack ?? 'open' },
        },
        ({ runOpen }, ctx) => runOpen({ kind, ack, ids, flags }, ctx),
      );
    });
}
