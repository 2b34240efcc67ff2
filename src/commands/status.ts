import type { Command } from 'commander';
import type { SetExitCode } from './index.js';
import { loadCommandContext, withConfigFlags, type ConfigFlags } from './context.js';

interface StatusFlags extends ConfigFlags {
  json?: boolean;
  limit?: string;
}

export function register(program: Command, setExitCode: SetExitCode): void {
  const status = program
    .command('status')
    .summary('show batches, orders by state, the queue and the circuit breaker')
    .argument('[batch]', 'a batch id (default: the most recent batches)')
    .description('Show batches and their orders by state (queued, delivered, dead-lettered, held), the queue, and the circuit breaker.')
    .option('--json', 'print JSON instead of text')
    .option('--limit <n>', 'how many recent batches without a batch id', '10')
    .addHelpText('after', '\nExamples:\n  bulkorder status\n  bulkorder status b-20261122T020000-1a2b3c --json');
  withConfigFlags(status).action(async (batchId: string | undefined, flags: StatusFlags) => {
    const { runStatus } = await import('./statusRun.js');
    setExitCode(await runStatus(batchId, flags, await loadCommandContext(flags, { announce: false })));
  });

  const resume = program
    .command('resume')
    .summary('resume delivery after `bulkorder pause` or an open circuit breaker')
    .description('Resume delivery: clears a manual pause and closes the circuit breaker (its burst of dead letters is queued again). The breaker heals by itself; use this after fixing a cause it cannot see fixed.');
  withConfigFlags(resume).action(async (flags: ConfigFlags) => {
    const { runResume } = await import('./statusRun.js');
    setExitCode(await runResume(await loadCommandContext(flags, { announce: false })));
  });

  const pause = program
    .command('pause')
    .summary('pause delivery for every worker until `bulkorder resume`')
    .description('Pause delivery for every worker (requests in flight finish). The circuit breaker never resumes a manual pause; `bulkorder resume` does.');
  withConfigFlags(pause).action(async (flags: ConfigFlags) => {
    const { runPause } = await import('./statusRun.js');
    setExitCode(await runPause(await loadCommandContext(flags, { announce: false })));
  });
}

export type { StatusFlags };
