import { ExitCode, UsageError } from '../errors.js';
import { startDashboard } from '../dashboard/startDashboard.js';
import { DEFAULT_PORTS, type CommandContext, type ConfigFlags } from './options.js';

/** `bulkorder dashboard`. */
export interface DashboardFlags extends ConfigFlags {
  host?: string;
  port?: string;
  readOnly?: boolean;
}

/** `bulkorder dashboard`: serves until SIGTERM or SIGINT. */
export async function runDashboard(flags: DashboardFlags, ctx: CommandContext): Promise<number> {
  const port = Number(flags.port ?? DEFAULT_PORTS.dashboard);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError('USAGE', `--port must be a port number from 0 to 65535, not '${flags.port}'`);
  const dashboard = await startDashboard(ctx.config, ctx.logger, {
    host: flags.host ?? '127.0.0.1',
    port,
    readOnly: flags.readOnly === true,
  });
  ctx.stdout.write(`dashboard: ${dashboard.url}/\n`);
  // Redis gone or not, the stop policy ends the process at the grace period's end.
  await new Promise<void>((resolve) => ctx.stop.graceful(() => resolve(), ctx.config.delivery.shutdownGraceMs));
  dashboard.shuttingDown();
  await dashboard.close();
  return ExitCode.ok;
}
