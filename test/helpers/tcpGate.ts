import { readFileSync } from 'node:fs';
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

/**
 * The lowest port the kernel hands out to outgoing connections (Linux: ip_local_port_range; elsewhere the IANA one). A
 * gate that is down may not get its port back if a connection of the suite took it meanwhile (EADDRINUSE after a
 * 3-minute outage, seen once in CI), so the gate listens on a port below them, which no connection is given.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low)) return low;
  } catch {
    // not Linux
  }
  return 49_152;
}

/** A port below the ephemeral range (from 10,000), at random; 0 (any) after 20 taken ones or where that range is small. */
function gatePort(attempt: number, low: number): number {
  const first = 10_000;
  if (low - first < 1_000 || attempt >= 20) return 0;
  return first + Math.floor(Math.random() * (low - first));
}

export async function startTcpGate(targetUrl = 'http://127.0.0.1:1'): Promise<TcpGate> {
  let target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let held: { to: Socket; chunk: Buffer }[] | undefined;
  const forward = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => (held === undefined ? to.write(chunk) : held.push({ to, chunk })));
  /** Listens on `port`; rejects when the port is taken (the server's 'error' is that one answer). */
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
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
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        server = next;
        port = (next.address() as { port: number }).port;
        resolve();
      });
    });
  /** The first listen: a port below the ephemeral range, another one while the one tried is taken. */
  const low = ephemeralLow();
  const listenFirst = async (attempt = 0): Promise<void> => {
    port = gatePort(attempt, low);
    try {
      await listen();
    } catch (error) {
      if (port === 0) throw error;
      await listenFirst(attempt + 1);
    }
  };
  const down = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listenFirst();
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
