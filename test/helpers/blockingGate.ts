import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder in front of Redis that can make a BullMQ worker's blocking wait deaf, as a Redis
 * Cluster failover was seen to (issue 37): `deafen()` cuts the blocking connection of the named
 * worker of `queue` (BullMQ names it `<prefix>:<base64 queue>:w:<worker name>`, CLIENT SETNAME at connect) and
 * accepts its reconnection but never answers it, so ioredis waits for its ready check for good
 * and BullMQ's own watchdog waits on ioredis. Only that one reconnection is swallowed: a blocking
 * connection made later (a new BullMQ worker) passes.
 */
export interface BlockingGate {
  /** REDIS_URL through the gate. */
  url: string;
  /** Named blocking connections that reached Redis so far. */
  blockingConnections(): number;
  deafen(): void;
  /** Reconnections swallowed since `deafen()` (0 or 1). */
  swallowed(): number;
  close(): Promise<void>;
}

export async function startBlockingGate(redisUrl: string, queue: string): Promise<BlockingGate> {
  const blockingName = Buffer.from(`:${Buffer.from(queue).toString('base64')}:w:`);
  const target = new URL(redisUrl);
  const sockets = new Set<Socket>();
  const blocking = new Set<Socket>();
  let named = 0;
  let deaf = false;
  let swallowed = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 6379) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    let first = true;
    let swallow = false;
    client.on('data', (chunk: Buffer) => {
      if (first) {
        first = false;
        if (chunk.includes(blockingName)) {
          if (deaf && swallowed === 0) {
            swallowed++;
            swallow = true;
            upstream.destroy();
          } else {
            named++;
            blocking.add(client);
          }
        }
      }
      if (!swallow) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      if (!swallow) client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    blockingConnections: () => named,
    deafen() {
      deaf = true;
      for (const socket of blocking) socket.destroy();
      blocking.clear();
    },
    swallowed: () => swallowed,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
