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
        'results and rejects are. Needs only a Redis (REDIS_URL, default redis://127.0.0.1:6379; a private one is ' +
        'started when none answers there). Hermetic: every other bulkorder setting of the environment is set aside ' +
        '(and named), and a .env is never read, so a real API is never called.',
    )
    .option('--out <dir>', 'where results and rejects files go', 'demo-output')
    .option('--max-wait <seconds>', 'give up after this long, exit 5 and say what the demo waited for (default 600)');
  withExamples(
    command,
    ['npm run demo', 'bulkorder demo --out /tmp/demo --max-wait 300'],
    'Exit codes: 0 everything ended as designed; 4 something did not (a duplicate, an order not settled); 5 no Redis ' +
      'and no redis-server to start, or --max-wait reached (DEMO_DEADLINE, naming what it waited for).',
  ).action(async (flags: DemoFlags) => {
    const { runDemo } = await import('./demoRun.js');
    io.setExitCode(await runDemo(flags, io));
  });
}
