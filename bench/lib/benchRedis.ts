/**
 * A redis-server of the benchmark's own (test/helpers/privateRedis.ts), so millions of keys
 * never land in the shared Redis and INFO counts only the code under test, plus the few INFO
 * readings the benchmarks report: memory and commands per order.
 */
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../test/helpers/privateRedis.js';

export interface BenchRedis {
  url: string;
  /** A plain connection for INFO, polling and clean-up. */
  client: Redis;
  /** Empties the server (FLUSHALL) and zeroes its command statistics. */
  reset(): Promise<void>;
  /** `used_memory` in bytes. */
  usedMemory(): Promise<number>;
  /** The redis-server's process id (its CPU seconds are read from /proc). */
  readonly pid: number;
  /** Calls per command since the last reset (INFO commandstats), without INFO/CONFIG themselves. */
  commandCalls(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** Starts a private redis-server (noeviction, as bulkorder requires; no persistence). */
export async function startBenchRedis(): Promise<BenchRedis> {
  const server: PrivateRedis = await startPrivateRedis(['--maxmemory-policy', 'noeviction']);
  const client = new Redis(server.url, { maxRetriesPerRequest: null });
  return {
    url: server.url,
    client,
    get pid() {
      return server.process.pid ?? 0;
    },
    async reset() {
      await client.flushall();
      await client.config('RESETSTAT');
    },
    async usedMemory() {
      const info = await client.info('memory');
      return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
    },
    async commandCalls() {
      const info = await client.info('commandstats');
      const calls: Record<string, number> = {};
      for (const match of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
        const name = match[1]!;
        if (!/^(info|config|ping|client|flushall|hello|select)/.test(name)) calls[name] = Number(match[2]);
      }
      return calls;
    },
    async stop() {
      client.disconnect();
      await server.stop();
    },
  };
}

/** `calls` divided by `per`, largest first, as `evalsha 2.00, hset 1.00`. */
export function perOrder(calls: Record<string, number>, per: number, top = 8): string {
  return Object.entries(calls)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `${name} ${(n / per).toFixed(2)}`)
    .join(', ');
}
