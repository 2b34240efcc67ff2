import type { Command } from 'commander';
import { runAction, withConfigFlags, withExamples, type CommandIo, type RecordKindName } from './options.js';
import { cliOf } from '../kinds/recordKind.js';
import type { BatchFlags } from './batchRun.js';

/** Declares `batch show|cancel|release` under `parent` (`bulkorder batch`, `bulkorder accounts batch`). */
export function register(parent: Command, io: CommandIo, kind: RecordKindName): void {
  const cli = `${cliOf(kind)} batch`;
  const group = parent
    .command('batch')
    .summary('show, cancel or release one batch (its canary, why it is held)')
    .description(
      "One batch's own circuit: each batch starts with a canary of its first orders (BULKORDER_CANARY_ORDERS); when more than " +
        'BULKORDER_CANARY_REFUSED_PERCENT of it is refused with one cause, the batch holds itself while other batches go on, ' +
        'and probes on its own. A person may cancel it (its unsent orders end as cancelled) or release it (the rest is sent).',
    );
  withExamples(group, [
    `${cli} show b-20261122T020000-1a2b3c`,
    `${cli} cancel b-20261122T020000-1a2b3c --why "wrong catalogue"`,
    `${cli} release b-20261122T020000-1a2b3c --why "API fixed" --json`,
  ]);
  const run = (action: 'show' | 'cancel' | 'release', batchId: string, flags: BatchFlags): Promise<void> =>
    runAction(io, flags, { load: () => import('./batchRun.js'), announce: false }, ({ runBatch }, ctx) =>
      runBatch({ kind, action, batchId, flags }, ctx),
    );
  const show = withConfigFlags(
    group.command('show').description("show a batch's circuit: canary, held and why, who cancelled or released it"),
  )
    .argument('<batch>', 'a batch id')
    .option('--json', 'print JSON instead of text');
  withExamples(show, [`${cli} show b-20261122T020000-1a2b3c`, `${cli} show b-20261122T020000-1a2b3c --json`]);
  show.action((batchId: string, flags: BatchFlags) => run('show', batchId, flags));
  for (const action of ['cancel', 'release'] as const) {
    const command = withConfigFlags(
      group
        .command(action)
        .description(
          action === 'cancel'
            ? 'end every unsent order of the batch as cancelled (BATCH_CANCELLED in its results); nothing more of it is sent'
            : 'send the rest of the batch regardless of its canary; the orders it refused are sent again',
        ),
    )
      .argument('<batch>', 'a batch id')
      .option('--why <text>', 'why (recorded with who did it)')
      .option('--by <name>', 'who (default: the OS user and host)')
      .option('--json', 'print JSON instead of text');
    withExamples(command, [
      `${cli} ${action} b-20261122T020000-1a2b3c --why "${action === 'cancel' ? 'wrong catalogue' : 'API fixed'}"`,
      `${cli} ${action} b-20261122T020000-1a2b3c --by ops --json`,
    ]);
    command.action((batchId: string, flags: BatchFlags) => run(action, batchId, flags));
  }
}
