import type { Command } from 'commander';
import type { DemoFlags, SetExitCode } from './options.js';

export function register(program: Command, setExitCode: SetExitCode): void {
  program
    .command('demo')
    .summary('run the main job end to end against the built-in simulator (needs only a Redis)')
    .description(
      'The main job on one command, against the built-in simulator: starts the simulator (with latency and a few\n' +
        'injected faults), runs workers in this process, imports the sample order files, follows them to the end,\n' +
        'registers the sample employees (Cafetariaplan API), prints a one-time login URL, and says where the\n' +
        'results and rejects are. Needs only a Redis (REDIS_URL, default redis://127.0.0.1:6379).',
    )
    .option('--out <dir>', 'where results and rejects files go', 'demo-output')
    .addHelpText('after', '\nExample:\n  npm run demo\n  bulkorder demo --out /tmp/demo')
    .action(async (flags: DemoFlags) => {
      const { runDemo } = await import('./demoRun.js');
      setExitCode(await runDemo(flags));
    });
}
