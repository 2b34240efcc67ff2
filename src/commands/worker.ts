import type { Command } from 'commander';
import { type CommandIo, runAction, withConfigFlags, withExamples } from './options.js';
import type { WorkerFlags } from './workerRun.js';

export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('worker')
    .summary('deliver queued orders until stopped; run any number, on any hosts')
    .description(
      'Deliver queued orders to the Business API until stopped (SIGTERM/SIGINT: finish requests in flight, then exit). ' +
        'Run any number of these, on any hosts sharing the Redis: they share one OAuth2 token and one ledger.',
    )
    .option('--concurrency <n>', 'requests in flight in each worker process (default BULKORDER_CONCURRENCY, 20)')
    .option(
      '--processes <n>',
      "worker processes: 'auto' (one per core) or a count; 1 in containers that scale by replicas (default BULKORDER_WORKER_PROCESSES, auto)",
    )
    .option(
      '--http-port <n>',
      'serve /metrics (Prometheus), /healthz and /readyz on this port (worker process i of --processes N: port + i)',
    )
    .option('--http-host <host>', 'interface of --http-port (default 127.0.0.1)');
  withExamples(command, [
    'bulkorder worker --concurrency 50 --http-port 9464 --config-file .env',
    'bulkorder worker --processes 1   # one process per container',
  ]);
  withConfigFlags(command).action((flags: WorkerFlags) =>
    runAction(io, flags, { load: () => import('./workerRun.js') }, ({ runWorker }, ctx) => runWorker(flags, ctx)),
  );
}
