import { Redis, type RedisOptions } from 'ioredis';
import { ConfigError, InfrastructureError } from './errors.js';

/**
 * The one place Redis clients are made (STYLE.md). Roles follow BullMQ's production guide:
 * - `worker`: blocking connections for BullMQ Workers; `maxRetriesPerRequest: null` so a Redis
 *   blip makes commands wait for the reconnect instead of failing the job's bookkeeping.
 * - `producer`: CLI commands (import, status, ...); fail fast while Redis is down
 *   (`enableOfflineQueue: false`) so a person sees an error, not a hang.
 */
export type RedisRole = 'worker' | 'producer';

export function createRedis(url: string, role: RedisRole, extra: RedisOptions = {}): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra }
      : { maxRetriesPerRequest: 3, enableOfflineQueue: false, connectTimeout: 5_000, lazyConnect: true, ...extra };
  const redis = new Redis(url, options);
  // Without a listener ioredis prints every reconnect failure to the console. A failure that
  // matters surfaces through the command that fails (and the worker's own 'error' log).
  redis.on('error', () => undefined);
  return redis;
}

/** How to get a Redis, printed whenever none answers. */
export const HOW_TO_START_REDIS =
  'Start one with `docker compose up -d redis` (docker-compose.yml in this project), or install redis-server ' +
  'and run `redis-server --appendonly yes --maxmemory-policy noeviction`, then point REDIS_URL at it ' +
  '(default redis://127.0.0.1:6379).';

/**
 * Connects (if needed) and checks that Redis is fit to hold orders: it answers, and its
 * `maxmemory-policy` is `noeviction` (any other policy may silently drop queued orders or
 * ledger entries when memory runs short). Throws InfrastructureError (exit 5) otherwise.
 */
export async function assertRedisReady(redis: Redis, url: string): Promise<void> {
  // An authentication failure reaches the 'error' event; the command itself only sees the closed connection.
  let lastError: unknown;
  const onError = (error: unknown): void => {
    lastError = error;
  };
  redis.on('error', onError);
  try {
    if (redis.status === 'wait') await redis.connect();
    await redis.ping();
  } catch (error) {
    // Redis answered, with an authentication error code (the first word of its reply): a
    // configuration mistake, not an outage.
    const first = (e: unknown): string | undefined => (e instanceof Error ? e.message.split(' ')[0] : undefined);
    const reply = [first(error), first(lastError)].find((word) => word === 'WRONGPASS' || word === 'NOAUTH');
    if (reply === 'WRONGPASS' || reply === 'NOAUTH') {
      throw new ConfigError(
        'REDIS_URL',
        reply === 'WRONGPASS'
          ? `Redis at ${redactUrl(url)} refused the user name or password in REDIS_URL (WRONGPASS); check them (redis://user:password@host:port).`
          : `Redis at ${redactUrl(url)} requires a password and REDIS_URL gives none (NOAUTH); use redis://:password@host:port.`,
      );
    }
    throw new InfrastructureError('REDIS_UNAVAILABLE', `Redis does not answer at ${redactUrl(url)}. ${HOW_TO_START_REDIS}`, { cause: error });
  } finally {
    redis.off('error', onError);
  }
  const policy = await maxmemoryPolicy(redis);
  if (policy !== undefined && policy !== 'noeviction') {
    throw new InfrastructureError(
      'REDIS_EVICTION_POLICY',
      `Redis at ${redactUrl(url)} has maxmemory-policy '${policy}'; bulkorder needs 'noeviction' so that queued ` +
        `orders and the delivery ledger are never evicted. Set it with \`redis-cli config set maxmemory-policy noeviction\` ` +
        `(and in redis.conf), or use the project's docker-compose.yml.`,
    );
  }
}

async function maxmemoryPolicy(redis: Redis): Promise<string | undefined> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    if (reply[1] !== undefined) return reply[1];
  } catch {
    // Managed Redis services often disable CONFIG; INFO still tells.
  }
  const info = await redis.info('memory');
  return /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
}

/** A Redis URL with any password replaced, fit for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable REDIS_URL)';
  }
}

/** Deletes every key under `prefix:` (SCAN in pages, never KEYS). For the demo's own namespace and tests. */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}
