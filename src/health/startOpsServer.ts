import { serve, type ServerType } from '@hono/node-server';
import { InfrastructureError } from '../errors.js';

/** A listening HTTP server; `close()` stops it and ends open connections. */
export interface OpsServer {
  /** `http://host:port`, with the port actually bound (0 picks a free one). */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves a hono app on host:port (loopback unless told otherwise). `flags` are the command's names
 * for the two (default `--port` and `--host`, the dashboard's; a worker's are `--http-port` and
 * `--http-host`), so a port in use is refused in the words of the command that chose it.
 */
export async function startHttpServer(
  app: { fetch(request: Request): Response | Promise<Response> },
  options: { host: string; port: number; flags?: { port: string; host: string } },
): Promise<OpsServer> {
  const flags = options.flags ?? { port: '--port', host: '--host' };
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve(
      { fetch: (request: Request) => app.fetch(request), hostname: options.host, port: options.port },
      () => resolve(s),
    );
    s.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new InfrastructureError(
          'HTTP_LISTEN_FAILED',
          `cannot listen on ${options.host}:${options.port} (${error.code ?? error.message}): choose another ${flags.port} or ${flags.host}`,
          { cause: error, details: { host: options.host, port: options.port, errno: error.code } },
        ),
      ),
    );
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
