import type { Cluster, Redis, RedisOptions as IoRedisOptions } from 'ioredis';
import { ioredis } from './cjsPackages.js';
import { maskPassword, type RedisNode, type SecretUrl } from './config.js';
import { ConfigError, InfrastructureError } from './errors.js';

/**
 * The one place Redis clients are made (STYLE.md). Roles follow BullMQ's production guide:
 * - `worker`: blocking connections for BullMQ Workers; `maxRetriesPerRequest: null` so a Redis
 *   blip makes commands wait for the reconnect instead of failing the job's bookkeeping.
 * - `producer`: CLI commands (import, status, ...); fail fast while Redis is down
 *   (`enableOfflineQueue: false`) so a person sees an error, not a hang.
 */
export type RedisRole = 'worker' | 'producer';

/** One Redis or a Redis Cluster: what every store, queue and worker of bulkorder works with. */
export type RedisClient = Redis | Cluster;

/**
 * ioredis options without `replyMapping`: bulkorder's clients keep the default ('legacy') replies, and
 * under exactOptionalPropertyTypes ioredis's own `replyMapping?: Mode | undefined` does not fit its constructors.
 */
type RedisOptions = Omit<IoRedisOptions, 'replyMapping'>;

/** Where Redis is (src/config.ts): a URL, or cluster seed nodes (the URL then gives only credentials and TLS). */
export interface RedisEndpoint {
  readonly redisUrl: SecretUrl;
  readonly redisClusterNodes: readonly RedisNode[];
}

/**
 * A client for the endpoint in the given role: an ioredis `Cluster` when cluster nodes are
 * configured (key prefixes then carry a hash tag, src/config.ts `redisPrefix`), else a `Redis`.
 */
export function createRedis(endpoint: RedisEndpoint | string, role: RedisRole, extra: RedisOptions = {}): RedisClient {
  const { redisUrl, redisClusterNodes } =
    typeof endpoint === 'string'
      ? { redisUrl: endpoint, redisClusterNodes: [] }
      : { redisUrl: endpoint.redisUrl.reveal(), redisClusterNodes: endpoint.redisClusterNodes };
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra }
      : { maxRetriesPerRequest: 3, enableOfflineQueue: false, connectTimeout: 5_000, lazyConnect: true, ...extra };
  const redis =
    redisClusterNodes.length > 0
      ? createCluster(redisClusterNodes, redisUrl, options)
      : new ioredis.Redis(redisUrl, options);
  // Without a listener ioredis prints every reconnect failure to the console. A failure that
  // matters surfaces through the command that fails (and the worker's own 'error' log).
  redis.on('error', () => undefined);
  return redis;
}

function createCluster(nodes: readonly RedisNode[], url: string, options: RedisOptions): Cluster {
  const { lazyConnect, enableOfflineQueue, enableReadyCheck, ...perNode } = options;
  const credentials = urlCredentials(url);
  const clusterOptions: NonNullable<ConstructorParameters<typeof Cluster>[1]> = {
    redisOptions: { ...perNode, ...credentials },
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
  };
  return new ioredis.Cluster(
    nodes.map((node) => ({ host: node.host, port: node.port })),
    clusterOptions,
  );
}

/** The username, password and TLS of a redis:// or rediss:// URL, for every cluster node. */
function urlCredentials(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** How to get a Redis, printed whenever none answers. */
const HOW_TO_START_REDIS =
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
  /** Let a Redis that evicts pass: for a command that reports it rather than writes (`status`). Default false. */
  allowEviction?: boolean;
}

/**
 * Connects (if needed) and checks that Redis is fit to hold orders: it answers, its
 * `maxmemory-policy` is `noeviction` (any other policy may silently drop queued orders or
 * ledger entries when memory runs short), and it persists its data (AOF or RDB snapshots: a
 * Redis restarted empty forgets what was delivered, and a re-import sends everything again).
 * Throws InfrastructureError (exit 5) otherwise; a Redis without persistence is only warned
 * about unless `requirePersistence`.
 */
export async function assertRedisReady(
  redis: RedisClient,
  redisUrl: SecretUrl | string,
  readiness: RedisReadiness = {},
): Promise<void> {
  // Only ever shown, never connected to: the password masked.
  const url = String(redisUrl);
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
    throw new InfrastructureError(
      'REDIS_UNAVAILABLE',
      `Redis does not answer at ${redactUrl(url)}. ${HOW_TO_START_REDIS}`,
      { cause: error },
    );
  } finally {
    redis.off('error', onError);
  }
  const policy = await maxmemoryPolicy(redis);
  if (policy !== undefined && policy !== 'noeviction' && readiness.allowEviction !== true) {
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
    throw new InfrastructureError(
      'REDIS_NOT_PERSISTENT',
      `${problem} Production refuses it; BULKORDER_ALLOW_VOLATILE_REDIS=yes runs anyway.`,
      { details: { evidence: persistence.evidence } },
    );
  }
  if (warned.has(url)) return;
  warned.add(url);
  (readiness.warn ?? ((message) => process.stderr.write(`bulkorder: WARNING: ${message}\n`)))(
    `${problem} Acceptance runs anyway; production would refuse it.`,
  );
}

// Once per process and URL: every command and worker connection checks, the warning is said once.
const warned = new Set<string>();

/** Whether Redis persists, and what that was read from (for messages). */
export interface RedisPersistence {
  persistent: boolean;
  evidence: string;
  /** False when CONFIG was refused and INFO persistence was read instead. */
  verified: boolean;
}

/**
 * Reads `appendonly` and `save` with CONFIG GET; where CONFIG is refused (managed Redis), INFO
 * persistence: AOF enabled, or RDB snapshots taken since start, is assumed to mean persistence.
 */
export async function redisPersistence(redis: RedisClient): Promise<RedisPersistence> {
  try {
    const [, appendonly] = await redis.config('GET', 'appendonly');
    const [, save] = await redis.config('GET', 'save');
    if (appendonly !== undefined && save !== undefined) {
      const evidence = `appendonly ${appendonly}, save '${save}'`;
      return { persistent: appendonly === 'yes' || save.trim() !== '', evidence, verified: true };
    }
  } catch {
    // CONFIG is often disabled on managed Redis; INFO still tells most of it.
  }
  const info = await redis.info('persistence');
  const field = (name: string): string | undefined => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  if (field('aof_enabled') === '1')
    return { persistent: true, evidence: 'CONFIG refused; INFO persistence: aof_enabled:1', verified: false };
  const saves = Number(field('rdb_saves') ?? '0');
  const lastSave = Number(field('rdb_last_bgsave_time_sec') ?? '-1');
  if (saves > 0 || lastSave >= 0) {
    return {
      persistent: true,
      evidence: `CONFIG refused; assumed RDB snapshots are configured, since INFO persistence shows one taken (rdb_saves:${saves})`,
      verified: false,
    };
  }
  return {
    persistent: false,
    evidence: 'CONFIG refused; INFO persistence: aof_enabled:0 and no RDB snapshot taken since start',
    verified: false,
  };
}

/**
 * What may make a Redis lose orders while bulkorder runs, read again and again by the worker's guard
 * (src/worker/redisGuard.ts), `status` and the dashboard: an eviction policy other than `noeviction`,
 * no persistence (neither AOF nor RDB snapshots), or neither knowable because CONFIG is refused
 * (managed Redis; INFO is then read, but a guess is not a proof).
 */
export interface RedisRisk {
  /** `maxmemory-policy` other than `noeviction`, when one was read. */
  evicting: boolean;
  /** The policy read (CONFIG GET, or INFO memory where CONFIG is refused). */
  policy: string | undefined;
  /** AOF on or RDB snapshots configured (as redisPersistence tells). */
  persistent: boolean;
  /** False when CONFIG was refused: policy and persistence come from INFO. */
  verified: boolean;
  /** What was read, for messages. */
  evidence: string;
}

/** Reads a Redis's eviction policy and persistence (CONFIG GET, INFO where CONFIG is refused). */
export async function redisRisk(redis: RedisClient): Promise<RedisRisk> {
  let verified = true;
  let policy: string | undefined;
  try {
    policy = (await redis.config('GET', 'maxmemory-policy'))[1];
  } catch {
    verified = false;
  }
  if (policy === undefined) {
    verified = false;
    policy = /^maxmemory_policy:(\S+)/m.exec(await redis.info('memory'))?.[1];
  }
  const persistence = await redisPersistence(redis);
  return {
    evicting: policy !== undefined && policy !== 'noeviction',
    policy,
    persistent: persistence.persistent,
    verified: verified && persistence.verified,
    evidence: `maxmemory-policy ${policy ?? 'unknown'}; ${persistence.evidence}`,
  };
}

async function maxmemoryPolicy(redis: RedisClient): Promise<string | undefined> {
  try {
    const reply = await redis.config('GET', 'maxmemory-policy');
    if (reply[1] !== undefined) return reply[1];
  } catch {
    // Managed Redis services often disable CONFIG; INFO still tells.
  }
  const info = await redis.info('memory');
  return /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
}

/** A Redis URL with any password replaced, fit for messages and logs. */
export function redactUrl(url: string): string {
  return maskPassword(url);
}

/** Deletes every key under `prefix:` (SCAN in pages, never KEYS). For the demo's own namespace and tests. */
export async function deleteKeysUnder(redis: RedisClient, prefix: string): Promise<number> {
  // A cluster's keys are spread over its masters: SCAN each one.
  if (redis instanceof ioredis.Cluster) {
    let deleted = 0;
    for (const node of redis.nodes('master')) deleted += await deleteKeysOn(node, prefix);
    return deleted;
  }
  return deleteKeysOn(redis, prefix);
}

async function deleteKeysOn(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', keysUnder(prefix), 'COUNT', 1000);
    cursor = next;
    if (keys.length === 0) continue;
    // One DEL per key (pipelined): a cluster node refuses a DEL whose keys are in different slots.
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.del(key);
    for (const [error, count] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      deleted += Number(count);
    }
  } while (cursor !== '0');
  return deleted;
}

/**
 * The SCAN pattern of every key under a prefix. A hash-tagged prefix (`{bulkorder:env}`, a cluster's)
 * also covers its kinds' prefixes inside the tag (`{bulkorder:env:accounts}`, src/keyspace.ts `subPrefix`).
 */
function keysUnder(prefix: string): string {
  if (prefix.startsWith('{') && prefix.endsWith('}')) return `${escapeGlob(prefix.slice(0, -1))}[}:]*`;
  return `${escapeGlob(prefix)}:*`;
}

/** A prefix as a literal SCAN pattern: a cluster's hash tag braces are fine, but `[`, `*`, `?` and `\\` are not. */
function escapeGlob(prefix: string): string {
  return prefix.replace(/[[\]*?\\]/g, '\\$&');
}
