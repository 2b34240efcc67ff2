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
    .summary('resume delivery after the circuit breaker paused it')
    .description('Resume delivery after the circuit breaker paused it (fix the cause first: credentials, User-Agent, base URL).');
  withConfigFlags(resume).action(async (flags: ConfigFlags) => {
    const { runResume } = await import('./statusRun.js');
    setExitCode(await runResume(await loadCommandContext(flags, { announce: false })));
  });
}

export type { StatusFlags };
