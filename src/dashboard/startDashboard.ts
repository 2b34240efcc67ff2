import { isIP } from 'node:net';
import type { Config } from '../config.js';
import { UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { startHttpServer } from '../health/startOpsServer.js';
import { dashboardApp } from './dashboardApp.js';
import { HostCheck } from './hostCheck.js';
import { UploadSpool } from './uploadSpool.js';
import { openDashboardState } from './dashboardState.js';

export interface DashboardServerOptions {
  /** Default 127.0.0.1: only this host can reach it unless told otherwise. */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  readOnly?: boolean;
}

/** A running dashboard. */
export interface RunningDashboard {
  readonly url: string;
  /** /readyz answers 503 from now on. */
  shuttingDown(): void;
  close(): Promise<void>;
}

/**
 * Opens the stores and serves the dashboard. Listening beyond loopback without
 * BULKORDER_DASHBOARD_TOKEN is refused: anyone on the network could read every page.
 */
export async function startDashboard(
  config: Config,
  logger: Logger,
  options: DashboardServerOptions = {},
): Promise<RunningDashboard> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopback(host) && config.dashboard.token === undefined) {
    throw new UsageError(
      'DASHBOARD_TOKEN_REQUIRED',
      `--host ${host} would let the network read the dashboard: set BULKORDER_DASHBOARD_TOKEN first (or keep the default 127.0.0.1).`,
    );
  }
  const state = await openDashboardState(config, logger);
  const spool = new UploadSpool(config.dashboard.uploadMaxBytes);
  let stopping = false;
  try {
    const hosts = new HostCheck({
      listenHost: host,
      publicUrl: config.dashboard.publicUrl,
      hosts: config.dashboard.hosts,
    });
    const server = await startHttpServer(
      dashboardApp(state, { readOnly: options.readOnly === true, hosts, shuttingDown: () => stopping, spool }),
      { host, port: options.port ?? 8080 },
    );
    logger.info(
      {
        url: server.url,
        readOnly: options.readOnly === true,
        actions: config.dashboard.token !== undefined && options.readOnly !== true,
      },
      'dashboard listening',
    );
    return {
      url: server.url,
      shuttingDown() {
        stopping = true;
      },
      async close() {
        await server.close();
        await spool.close();
        await state.close();
      },
    };
  } catch (error) {
    await spool.close();
    await state.close();
    throw error;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}
