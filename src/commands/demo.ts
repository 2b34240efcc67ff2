import type { Command } from 'commander';
import { withExamples, type CommandIo } from './options.js';
import type { DemoFlags } from './demoRun.js';

export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('demo')
    .summary('run the main job end to end against the built-in simulator (needs only a Redis)')
    .description(
      'The main job on one command, against the built-in simulator: starts the simulator (with latency and a few ' +
        'injected faults), runs workers in this process, imports the sample order files, follows them to the end, ' +
        'registers the sample employees (Cafetariaplan API), prints a one-time login URL, and says where the ' +
        'results and rejects are. Needs only a Redis (REDIS_URL, default redis://127.0.0.1:6379).',
    )
    .option('--out <dir>', 'where results and rejects files go', 'demo-output');
  withExamples(command, ['npm run demo', 'bulkorder demo --out /tmp/demo']).action(async (flags: DemoFlags) => {
    const { runDemo } = await import('./demoRun.js');
    io.setExitCode(await runDemo(flags, io));
  });
}
