import type { Command } from 'commander';
import {
  loadCommandContext,
  withConfigFlags,
  withExamples,
  type ConfigFlags,
  type RecordKindName,
  type CommandIo,
} from './options.js';
import type { StatusFlags } from './statusRun.js';

/** Declares `status` and `resume` under `parent` for one kind (`bulkorder status`, `bulkorder accounts status`). */
export function register(parent: Command, io: CommandIo, kind: RecordKindName): void {
  const orders = kind === 'orders';
  const status = parent
    .command('status')
    .summary(
      orders
        ? 'show batches, orders by state, the queue and the circuit breaker'
        : 'account batches, the accounts queue and its circuit breaker',
    )
    .argument('[batch]', 'a batch id (default: the most recent batches)')
    .description(
      `Show batches and their ${kind} by state (queued, delivered, dead-lettered, held), the queue, and the circuit breaker.`,
    )
    .option('--json', 'print JSON instead of text')
    .option('--limit <n>', 'how many recent batches without a batch id', '10');
  const cli = orders ? 'bulkorder' : 'bulkorder accounts';
  withExamples(status, [
    `${cli} status`,
    `${cli} status b-20261122T020000-1a2b3c --json`,
    `${cli} status --limit 3 --config-file .env`,
  ]);
  withConfigFlags(status).action(async (batchId: string | undefined, flags: StatusFlags) => {
    const { runStatus } = await import('./statusRun.js');
    io.setExitCode(await runStatus(kind, batchId, flags, await loadCommandContext(flags, io, { announce: false })));
  });

  const resume = parent
    .command('resume')
    .summary(
      orders
        ? 'resume delivery after `bulkorder pause` or an open circuit breaker'
        : 'resume account registration after `bulkorder accounts pause` or an open circuit breaker',
    )
    .description(
      'Resume delivery: clears a manual pause and closes the circuit breaker (its burst of dead letters is queued again). The breaker heals by itself; use this after fixing a cause it cannot see fixed.',
    );
  withExamples(resume, [`${cli} resume`, `${cli} status   # the queue is running again, the breaker closed`]);
  withConfigFlags(resume).action(async (flags: ConfigFlags) => {
    const { runResume } = await import('./statusRun.js');
    io.setExitCode(await runResume(kind, await loadCommandContext(flags, io, { announce: false })));
  });

  const pause = parent
    .command('pause')
    .summary(
      orders
        ? 'pause delivery for every worker until `bulkorder resume`'
        : 'pause account registration until `bulkorder accounts resume`',
    )
    .description(
      'Pause delivery for every worker (requests in flight finish). The circuit breaker never resumes a manual pause; `resume` does.',
    );
  withExamples(pause, [`${cli} pause`, `${cli} resume   # when the service is ready again`]);
  withConfigFlags(pause).action(async (flags: ConfigFlags) => {
    const { runPause } = await import('./statusRun.js');
    io.setExitCode(await runPause(kind, await loadCommandContext(flags, io, { announce: false })));
  });
}
