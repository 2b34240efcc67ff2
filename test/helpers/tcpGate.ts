import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder in front of a server: `down()` refuses connections (nothing listens), `up()` listens again on the
 * same port; `hold()` keeps every byte from going either way (kept, not dropped) until `release()`: the processes
 * behind it stand still at a point the test chose.
 */
export interface TcpGate {
  url: string;
  down(): Promise<void>;
  up(): Promise<void>;
  hold(): void;
  release(): void;
  close(): Promise<void>;
  /** Where connections go (set once the server behind it is known). */
  setTarget(url: string): void;
}

export async function startTcpGate(targetUrl = 'http://127.0.0.1:1'): Promise<TcpGate> {
  let target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let held: { to: Socket; chunk: Buffer }[] | undefined;
  const forward = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => (held === undefined ? to.write(chunk) : held.push({ to, chunk })));
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        forward(client, upstream);
        forward(upstream, client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const down = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    down,
    up: listen,
    hold: () => (held ??= []),
    release: () => {
      const queued = held ?? [];
      held = undefined;
      for (const { to, chunk } of queued) if (!to.destroyed) to.write(chunk);
    },
    close: down,
    setTarget: (url) => (target = new URL(url)),
  };
}
