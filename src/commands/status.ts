import type { Command } from 'commander';
import { loadCommandContext, withConfigFlags, type ConfigFlags, type RecordKindName, type SetExitCode, type StatusFlags } from './options.js';

/** Declares `status` and `resume` under `parent` for one kind (`bulkorder status`, `bulkorder accounts status`). */
export function register(parent: Command, setExitCode: SetExitCode, kind: RecordKindName): void {
  const orders = kind === 'orders';
  const status = parent
    .command('status')
    .summary(orders ? 'show batches, orders by state, the queue and the circuit breaker' : 'account batches, the accounts queue and its circuit breaker')
    .argument('[batch]', 'a batch id (default: the most recent batches)')
    .description(`Show batches and their ${kind} by state (queued, delivered, dead-lettered, held), the queue, and the circuit breaker.`)
    .option('--json', 'print JSON instead of text')
    .option('--limit <n>', 'how many recent batches without a batch id', '10')
    .addHelpText('after', `\nExamples:\n  ${orders ? 'bulkorder' : 'bulkorder accounts'} status\n  ${orders ? 'bulkorder' : 'bulkorder accounts'} status b-20261122T020000-1a2b3c --json`);
  withConfigFlags(status).action(async (batchId: string | undefined, flags: StatusFlags) => {
    const { runStatus } = await import('./statusRun.js');
    setExitCode(await runStatus(kind, batchId, flags, await loadCommandContext(flags, { announce: false })));
  });

  const resume = parent
    .command('resume')
    .summary(orders ? 'resume delivery after the circuit breaker paused it' : 'resume account registration after the circuit breaker paused it')
    .description('Resume delivery after the circuit breaker paused it (fix the cause first: credentials, User-Agent, base URL).');
  withConfigFlags(resume).action(async (flags: ConfigFlags) => {
    const { runResume } = await import('./statusRun.js');
    setExitCode(await runResume(kind, await loadCommandContext(flags, { announce: false })));
  });
}
