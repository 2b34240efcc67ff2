import type { Command } from 'commander';
import { DEFAULT_PORTS, runAction, withConfigFlags, withExamples, type CommandIo } from './options.js';
import type { DashboardFlags } from './dashboardRun.js';

export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('dashboard')
    .summary('web dashboard: batches, dead letters, held orders, schedules; /metrics, /healthz, /readyz')
    .description(
      "Serves the operator's dashboard until stopped. Binds 127.0.0.1 unless --host says otherwise (which needs " +
        'BULKORDER_DASHBOARD_TOKEN). Actions (retry, purge, release, resolve) need that token as bearer token or ' +
        'basic-auth password; without it, or with --read-only, the dashboard only shows.',
    )
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on', String(DEFAULT_PORTS.dashboard))
    .option('--read-only', 'hide and refuse every action');
  withExamples(command, [
    'bulkorder dashboard --config-file .env',
    'bulkorder dashboard --host 0.0.0.0 --port 8080 --read-only --config-file .env',
  ]);
  withConfigFlags(command).action((flags: DashboardFlags) =>
    runAction(io, flags, { load: () => import('./dashboardRun.js') }, ({ runDashboard }, ctx) =>
      runDashboard(flags, ctx),
    ),
  );
}
