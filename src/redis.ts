import { Redis, type RedisOptions } from 'ioredis';
import { InfrastructureError } from './errors.js';

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

/** What assertRedisReady demands beyond an answer and `noeviction`. */
export interface RedisReadiness {
  /**
   * true (production): refuse a Redis without persistence (exit 5); false: warn once per process.
   * Default false. config.ts sets it from BULKORDER_ENV and BULKORDER_ALLOW_VOLATILE_REDIS.
   */
  requirePersistence?: boolean;
  /** Where the warning goes; default stderr, once per process and Redis URL. */
  warn?: (message: string) => void;
}

/**
 * Connects (if needed) and checks that Redis is fit to hold orders: it answers, its
 * `maxmemory-policy` is `noeviction` (any other policy may silently drop queued orders or
 * ledger entries when memory runs short), and it persists its data (AOF or RDB snapshots: a
 * Redis restarted empty forgets what was delivered, and a re-import sends everything again).
 * Throws InfrastructureError (exit 5) otherwise; a Redis without persistence is only warned
 * about unless `requirePersistence`.
 */
export async function assertRedisReady(redis: Redis, url: string, readiness: RedisReadiness = {}): Promise<void> {
  try {
    if (redis.status === 'wait') await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new InfrastructureError('REDIS_UNAVAILABLE', `Redis does not answer at ${redactUrl(url)}. ${HOW_TO_START_REDIS}`, { cause: error });
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
  const persistence = await redisPersistence(redis);
  if (persistence.persistent) return;
  const problem =
    `Redis at ${redactUrl(url)} does not persist its data (${persistence.evidence}): if it restarts, the delivery ledger is gone ` +
    `and a re-import sends every order again. Turn on AOF (\`redis-cli config set appendonly yes\`, and appendonly yes in ` +
    `redis.conf) or RDB snapshots (save), or use the project's docker-compose.yml.`;
  if (readiness.requirePersistence === true) {
    throw new InfrastructureError('REDIS_NOT_PERSISTENT', `${problem} Production refuses it; BULKORDER_ALLOW_VOLATILE_REDIS=yes runs anyway.`, { details: { evidence: persistence.evidence } });
  }
  if (warned.has(url)) return;
  warned.add(url);
  (readiness.warn ?? ((message) => process.stderr.write(`bulkorder: WARNING: ${message}\n`)))(`${problem} Acceptance runs anyway; production would refuse it.`);
}

// Once per process and URL: every command and worker connection checks, the warning is said once.
const warned = new Set<string>();

/** Whether Redis persists, and what that was read from (for messages). */
export interface RedisPersistence {
  persistent: boolean;
  evidence: string;
}

/**
 * Reads `appendonly` and `save` with CONFIG GET; where CONFIG is refused (managed Redis), INFO
 * persistence: AOF enabled, or RDB snapshots taken since start, is assumed to mean persistence.
 */
export async function redisPersistence(redis: Redis): Promise<RedisPersistence> {
  try {
    const [, appendonly] = (await redis.config('GET', 'appendonly')) as string[];
    const [, save] = (await redis.config('GET', 'save')) as string[];
    if (appendonly !== undefined && save !== undefined) {
      const evidence = `appendonly ${appendonly}, save '${save}'`;
      return { persistent: appendonly === 'yes' || save.trim() !== '', evidence };
    }
  } catch {
    // CONFIG is often disabled on managed Redis; INFO still tells most of it.
  }
  const info = await redis.info('persistence');
  const field = (name: string): string | undefined => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  if (field('aof_enabled') === '1') return { persistent: true, evidence: 'CONFIG refused; INFO persistence: aof_enabled:1' };
  const saves = Number(field('rdb_saves') ?? '0');
  const lastSave = Number(field('rdb_last_bgsave_time_sec') ?? '-1');
  if (saves > 0 || lastSave >= 0) {
    return { persistent: true, evidence: `CONFIG refused; assumed RDB snapshots are configured, since INFO persistence shows one taken (rdb_saves:${saves})` };
  }
  return { persistent: false, evidence: 'CONFIG refused; INFO persistence: aof_enabled:0 and no RDB snapshot taken since start' };
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
