import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { ownedTempDir, removeOwnedTempDir } from './ownedTempDir.js';

export interface PrivateRedis {
  url: string;
  /** The running server process (replaced by `restart`). */
  readonly process: ChildProcess;
  /** SIGKILLs the server: no shutdown save, as in a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data folder (AOF, if enabled, is replayed). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A redis-server of the test's own on a spare loopback port (for settings a shared Redis must
 * not get, and for killing it). Needs `redis-server` on the PATH, as .ci/run does.
 */
export async function startPrivateRedis(extraArgs: string[] = []): Promise<PrivateRedis> {
  const port = await sparePort();
  const dir = ownedTempDir('bulkorder-redis-');
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    ...extraArgs,
  ];
  const url = `redis://127.0.0.1:${port}`;
  const spawnServer = async (): Promise<ChildProcess> => {
    const started = spawn('redis-server', args, { stdio: 'ignore' });
    live.add(started);
    started.once('exit', () => live.delete(started));
    try {
      await waitUntilAnswering(url);
    } catch (error) {
      // A server that never answered must not outlive the test that started it.
      await killChild(started);
      throw error;
    }
    return started;
  };
  let child: ChildProcess;
  try {
    child = await spawnServer();
  } catch (error) {
    await removeOwnedTempDir(dir);
    throw error;
  }
  const kill = () => killChild(child);
  return {
    url,
    get process() {
      return child;
    },
    kill,
    async restart() {
      await kill();
      child = await spawnServer();
    },
    async stop() {
      await kill();
      await removeOwnedTempDir(dir);
    },
  };
}

/** Every server started and not yet exited: killed when the test process exits, whatever the tests did. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}

export async function waitUntilAnswering(url: string): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let lastError: unknown;
  probe.on('error', (error: unknown) => (lastError = error)); // expected while the server starts
  // A server started with --requirepass answers NOAUTH (as an 'error' event): that is an answer.
  const answered = (error: unknown): boolean => error instanceof Error && /^(NOAUTH|WRONGPASS)/.test(error.message);
  try {
    for (let i = 0; ; i++) {
      try {
        if (probe.status !== 'ready') await probe.connect();
        await probe.ping();
        return;
      } catch (error) {
        if (answered(error) || answered(lastError)) return;
        if (i > 200) throw error;
        probe.disconnect();
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    probe.disconnect();
  }
}

export function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
