/**
 * Loopback servers on port 0 that misbehave in the ways the simulator cannot: resets,
 * silence, trickles, handshakes that never finish. Each returns its URL and a close().
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';

export interface RawServer {
  url: string;
  port: number;
  /** Requests (HTTP) or connections (TCP) seen so far. */
  hits(): number;
  close(): Promise<void>;
}

/** A node:http server; `handler` answers (or does not). */
export async function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<RawServer> {
  let hits = 0;
  const sockets = new Set<Socket>();
  const server = createHttpServer((req, res) => {
    hits++;
    handler(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return start(server, sockets, () => hits, 'http');
}

/** A node:net server; `onRequest` gets the socket once the first request bytes arrived (HTTP) or at once (`onConnect`). */
export async function tcpServer(options: {
  onData?: (socket: Socket, data: Buffer) => void;
  onConnect?: (socket: Socket) => void;
  protocol?: 'http' | 'https';
}): Promise<RawServer> {
  let hits = 0;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    hits++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    options.onConnect?.(socket);
    let first = true;
    socket.on('data', (data) => {
      if (first) options.onData?.(socket, data);
      first = false;
    });
  });
  return start(server, sockets, () => hits, options.protocol ?? 'http');
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function start(
  server: ReturnType<typeof createNetServer>,
  sockets: Set<Socket>,
  hits: () => number,
  protocol: string,
): Promise<RawServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${protocol}://127.0.0.1:${port}`,
    port,
    hits,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
