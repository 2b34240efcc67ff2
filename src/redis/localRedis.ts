/**
 * A private redis-server for `bulkorder demo` when none answers at REDIS_URL: started on a spare
 * loopback port with a temporary data folder (0700), stopped and removed at the end. The demo is
 * then the one command a new user needs with only Node and `redis-server` installed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { probeRedis } from './probeRedis.js';

export interface LocalRedis {
  readonly url: string;
  stop(): Promise<void>;
}

/** Whether a Redis answers PING at `url` within `timeoutMs`. */
export async function redisAnswers(url: string, timeoutMs = 1_500): Promise<boolean> {
  try {
    return await probeRedis(url, { connectTimeout: timeoutMs }, async (probe) => (await probe.ping()) === 'PONG');
  } catch {
    return false;
  }
}

/** The path of an executable on PATH, or undefined. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  return path
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find((file) => existsSync(file));
}

/**
 * The one command that gets a Redis on this system, for the message of a demo that found none:
 * the package manager there is, else Docker Compose with this project's docker-compose.yml.
 */
export function redisInstallHint(path = process.env.PATH ?? ''): string {
  if (onPath('apt-get', path) !== undefined) return 'sudo apt-get install -y redis-server';
  if (onPath('brew', path) !== undefined) return 'brew install redis';
  if (onPath('dnf', path) !== undefined) return 'sudo dnf install -y redis';
  return 'docker compose up -d redis';
}

/** Starts `redis-server` (found on PATH) on a spare port; resolves once it answers. */
export async function startLocalRedis(serverPath: string): Promise<LocalRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-demo-redis-')); // mkdtemp makes it 0700
  const port = await sparePort();
  const url = `redis://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    serverPath,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    if (await redisAnswers(url, 500)) return { url, stop };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`redis-server (${serverPath}) did not answer at ${url}`);
}

function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
