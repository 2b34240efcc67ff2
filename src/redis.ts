import { connect as tlsConnect } from 'node:tls';
import type { Cluster, Redis, RedisOptions as IoRedisOptions } from 'ioredis';
import { ioredis } from './cjsPackages.js';
import { maskPassword, type RedisNode, type RedisTlsSettings, type SecretUrl } from './config.js';
import { ConfigError, InfrastructureError, UsageError } from './errors.js';
import { tlsProblem } from './redisErrors.js';
import { redisRisk } from './redis/redisRisk.js';
import { DEFAULT_FAILOVER_MAX_MS, failoverOptions, rememberCluster } from './redis/clusterFailover.js';

export { redisPersistence, redisRisk, type RedisRisk } from './redis/redisRisk.js';
export { failoverClock, throughFailover, type FailoverClock } from './redis/clusterFailover.js';

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
  /** TLS files of a rediss:// Redis (BULKORDER_REDIS_TLS_*); absent: the system's CAs. */
  readonly redisTls?: RedisTlsSettings;
  /**
   * How long a cluster's failover is waited out before a command gives up (BULKORDER_REDIS_FAILOVER_MAX_MS,
   * src/redis/clusterFailover.ts); default 60 s. Workers wait for ever, retrying within this bound.
   */
  readonly redisFailoverMaxMs?: number;
}

/**
 * A client for the endpoint in the given role: an ioredis `Cluster` when cluster nodes are
 * configured (key prefixes then carry a hash tag, src/config.ts `redisPrefix`), else a `Redis`.
 */
export function createRedis(endpoint: RedisEndpoint | string, role: RedisRole, extra: RedisOptions = {}): RedisClient {
  const { redisUrl, redisClusterNodes, redisTls, failoverMaxMs } =
    typeof endpoint === 'string'
      ? { redisUrl: endpoint, redisClusterNodes: [], redisTls: undefined, failoverMaxMs: DEFAULT_FAILOVER_MAX_MS }
      : {
          redisUrl: endpoint.redisUrl.reveal(),
          redisClusterNodes: endpoint.redisClusterNodes,
          redisTls: endpoint.redisTls,
          failoverMaxMs: endpoint.redisFailoverMaxMs ?? DEFAULT_FAILOVER_MAX_MS,
        };
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true, ...tlsOptions(redisTls), ...extra }
      : {
          maxRetriesPerRequest: 3,
          enableOfflineQueue: false,
          connectTimeout: 5_000,
          lazyConnect: true,
          ...tlsOptions(redisTls),
          ...extra,
        };
  dropReadyCheckNotice();
  const key = `${redisUrl} ${redisClusterNodes.map((node) => `${node.host}:${node.port}`).join(',')}`;
  // A user without INFO (README, "Redis permissions"): ioredis's ready check would only say on the console that it
  // skips itself, and BullMQ reads the server's version with INFO unless told not to (the option is read from the client).
  if (infoRefused.has(key)) Object.assign(options, { enableReadyCheck: false, skipVersionCheck: true });
  const redis =
    redisClusterNodes.length > 0
      ? createCluster(redisClusterNodes, redisUrl, options, { failoverMaxMs, role })
      : new (ioredis().Redis)(redisUrl, options);
  endpointKeys.set(redis, key);
  // Without a listener ioredis prints every reconnect failure to the console. A failure that
  // matters surfaces through the command that fails (and the worker's own 'error' log).
  redis.on('error', () => undefined);
  return redis;
}

/** Each client's endpoint (URL and cluster nodes), to remember what its Redis user may not run. */
const endpointKeys = new WeakMap<RedisClient, string>();
/** Endpoints whose user this process found refused INFO: later clients are made without what needs it. */
const infoRefused = new Set<string>();

/** Makes this client, and every later one of its endpoint, do without INFO (assertRedisReady found it refused). */
function rememberInfoRefused(redis: RedisClient): void {
  const key = endpointKeys.get(redis);
  if (key !== undefined) infoRefused.add(key);
  // BullMQ reads `skipVersionCheck` from the options of the client it is given (a cluster's node options).
  const options = redis instanceof ioredis().Cluster ? redis.options.redisOptions : redis.options;
  if (options !== undefined) Object.assign(options, { skipVersionCheck: true });
}

/**
 * ioredis writes "Skipping the ready check because INFO command fails" to the console on every connection of a
 * user without INFO (a least-privilege ACL user), a worker's first connections included. bulkorder says what that
 * means once per process itself (assertRedisReady), so this one line of ioredis's is dropped; every other passes.
 */
function dropReadyCheckNotice(): void {
  if (readyCheckNoticeDropped) return;
  readyCheckNoticeDropped = true;
  const warn = console.warn.bind(console);
  console.warn = (...args: unknown[]): void => {
    if (typeof args[0] === 'string' && args[0].startsWith(READY_CHECK_NOTICE)) return;
    warn(...args);
  };
}
const READY_CHECK_NOTICE = 'Skipping the ready check because INFO command fails';
let readyCheckNoticeDropped = false;

/** A cluster client that rides a failover for up to `failoverMaxMs` (src/redis/clusterFailover.ts). */
function createCluster(
  nodes: readonly RedisNode[],
  url: string,
  options: RedisOptions,
  ride: { failoverMaxMs: number; role: RedisRole },
): Cluster {
  const { failoverMaxMs, role } = ride;
  const { lazyConnect, enableOfflineQueue, enableReadyCheck, ...perNode } = options;
  const credentials = urlCredentials(url, perNode);
  const clusterOptions: NonNullable<ConstructorParameters<typeof Cluster>[1]> = {
    ...failoverOptions(failoverMaxMs, role),
    redisOptions: { ...perNode, ...credentials },
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
  };
  const cluster = new (ioredis().Cluster)(
    nodes.map((node) => ({ host: node.host, port: node.port })),
    clusterOptions,
  );
  rememberCluster(cluster, {
    limitMs: failoverMaxMs,
    seeds: nodes.map((node) => ({ host: node.host, port: node.port })),
  });
  return cluster;
}

/** The username, password and TLS of a redis:// or rediss:// URL, for every cluster node. */
function urlCredentials(url: string, options: RedisOptions): RedisOptions {
  const parsed = new URL(url);
  const password = parsed.searchParams.get('password');
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(password === null ? {} : { password }),
    ...(parsed.protocol === 'rediss:' ? { tls: options.tls ?? {} } : {}),
  };
}

/** ioredis's `tls` of BULKORDER_REDIS_TLS_*: empty when none is set (a rediss:// URL then trusts the system's CAs). */
function tlsOptions(tls: RedisTlsSettings | undefined): RedisOptions {
  if (tls === undefined || Object.keys(tls).length === 0) return {};
  return {
    tls: {
      ...(tls.ca === undefined ? {} : { ca: tls.ca.reveal() }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert.reveal() }),
      ...(tls.key === undefined ? {} : { key: tls.key.reveal() }),
      ...(tls.passphrase === undefined ? {} : { passphrase: tls.passphrase.reveal() }),
    },
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
  /**
   * true (production): refuse a Redis whose eviction policy and persistence this user cannot read at
   * all (neither CONFIG nor INFO, a least-privilege ACL user; exit 5); false: warn once per process.
   * Default false. config.ts sets it from BULKORDER_ENV and BULKORDER_ALLOW_UNVERIFIED_REDIS.
   */
  requireVerifiable?: boolean;
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
 * about unless `requirePersistence`. A user that may run neither CONFIG nor INFO (README, "Redis
 * permissions") cannot know either: warned about once, refused only with `requireVerifiable`.
 * A refused password or TLS certificate is a configuration error (exit 2) naming what to set.
 */
export async function assertRedisReady(
  redis: RedisClient,
  redisUrl: SecretUrl | string,
  readiness: RedisReadiness = {},
): Promise<void> {
  // Only ever shown, never connected to: the password masked.
  const url = String(redisUrl);
  await answered(redis, url);
  const risk = await redisRisk(redis);
  if (!risk.infoAllowed) rememberInfoRefused(redis);
  if (risk.evicting && readiness.allowEviction !== true) {
    throw new InfrastructureError(
      'REDIS_EVICTION_POLICY',
      `Redis at ${redactUrl(url)} has maxmemory-policy '${risk.policy ?? '?'}'; bulkorder needs 'noeviction' so that queued ` +
        `orders and the delivery ledger are never evicted. Set it with \`redis-cli config set maxmemory-policy noeviction\` ` +
        `(and in redis.conf), or use the project's docker-compose.yml.`,
    );
  }
  if (!risk.known) {
    const problem =
      `Redis at ${redactUrl(url)} lets this user run neither CONFIG nor INFO, so whether it evicts keys or persists them ` +
      `cannot be verified (an evicting or forgetful Redis loses queued orders and what was delivered). Make sure it has ` +
      `maxmemory-policy noeviction and AOF or RDB snapshots, or grant the user +info +config|get (README, "Redis permissions").`;
    if (readiness.requireVerifiable === true)
      throw new InfrastructureError(
        'REDIS_UNVERIFIABLE',
        `${problem} Production refuses it; BULKORDER_ALLOW_UNVERIFIED_REDIS=yes runs anyway, once you have checked both.`,
        { details: { evidence: risk.evidence } },
      );
    warnOnce(
      url,
      readiness,
      `${problem} Runs anyway; production refuses it unless BULKORDER_ALLOW_UNVERIFIED_REDIS=yes.`,
    );
    return;
  }
  if (risk.persistent) return;
  const problem =
    `Redis at ${redactUrl(url)} does not persist its data (${risk.persistenceEvidence}): if it restarts, the delivery ledger is gone ` +
    `and a re-import sends every order again. Turn on AOF (\`redis-cli config set appendonly yes\`, and appendonly yes in ` +
    `redis.conf) or RDB snapshots (save), or use the project's docker-compose.yml.`;
  if (readiness.requirePersistence === true) {
    throw new InfrastructureError(
      'REDIS_NOT_PERSISTENT',
      `${problem} Production refuses it; BULKORDER_ALLOW_VOLATILE_REDIS=yes runs anyway.`,
      { details: { evidence: risk.persistenceEvidence } },
    );
  }
  warnOnce(url, readiness, `${problem} Acceptance runs anyway; production would refuse it.`);
}

/**
 * Connects and PINGs. A refused password or TLS certificate comes as an 'error' event while the
 * command itself only sees a closed connection (or, for a worker's client, waits for ever): such
 * an error ends the wait at once, as a configuration error naming what to set.
 */
async function answered(redis: RedisClient, url: string): Promise<void> {
  let lastError: unknown;
  let refuse: (error: unknown) => void = () => undefined;
  const refused = new Promise<never>((_, reject) => (refuse = reject));
  refused.catch(() => undefined); // awaited only while connecting; a later refusal is the 'error' listeners' to tell
  const onError = (error: unknown): void => {
    lastError = error;
    if (authReply(error) !== undefined || tlsProblem(error) !== undefined) refuse(error);
  };
  redis.on('error', onError);
  try {
    await Promise.race([
      (async () => {
        if (redis.status === 'wait') await redis.connect();
        await redis.ping();
      })(),
      refused,
    ]);
  } catch (error) {
    if (
      redis instanceof ioredis().Redis &&
      redis.options.tls !== undefined &&
      ['ECONNRESET', 'EPIPE'].includes((lastError as NodeJS.ErrnoException | undefined)?.code ?? '')
    )
      lastError = (await silentHandshake(redis)) ?? lastError;
    const reply = authReply(error) ?? authReply(lastError);
    if (reply !== undefined) {
      throw new ConfigError(
        'REDIS_URL',
        reply === 'WRONGPASS'
          ? `Redis at ${redactUrl(url)} refused the user name or password in REDIS_URL (WRONGPASS); check them (redis://user:password@host:port).`
          : `Redis at ${redactUrl(url)} requires a password and REDIS_URL gives none (NOAUTH); use redis://:password@host:port.`,
      );
    }
    const tls = tlsProblem(error) ?? tlsProblem(lastError);
    if (tls !== undefined) throw new UsageError('REDIS_TLS', `Redis at ${redactUrl(url)}: TLS error: ${tls}`);
    const plain = url.startsWith('redis://')
      ? ' If that Redis takes TLS connections only, use rediss://.'
      : ' If that port is a plain (not TLS) one, use redis://.';
    throw new InfrastructureError(
      'REDIS_UNAVAILABLE',
      `Redis does not answer at ${redactUrl(url)}.${plain} ${HOW_TO_START_REDIS}`,
      { cause: error },
    );
  } finally {
    redis.off('error', onError);
  }
}

/**
 * A TLS handshake with the server that then says nothing, for its verdict on this client: under TLS 1.3 a server
 * that wants a client certificate (or refuses ours) says so in an alert after the handshake, which a client writing
 * its first command at once (ioredis) may only see as a bare ECONNRESET. Silent, the alert comes; a server content
 * with the client sends its session ticket instead. Resolves the TLS error, or undefined.
 */
function silentHandshake(redis: Redis): Promise<unknown> {
  const { host, port, tls } = redis.options;
  return new Promise((resolve) => {
    const socket = tlsConnect({ ...(typeof tls === 'object' ? tls : {}), host, port });
    const done = (verdict: unknown): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(verdict);
    };
    // A bound for a server that sends neither (no ticket, no alert), not a timing: the answer is undefined then.
    const timer = setTimeout(() => done(undefined), SILENT_HANDSHAKE_MS).unref();
    socket.once('session', () => done(undefined));
    socket.once('error', (error) => done(error));
    socket.once('close', () => done(undefined));
  });
}
const SILENT_HANDSHAKE_MS = 5_000;

/** Redis answered with an authentication error code (the first word of its reply): a configuration mistake, not an outage. */
function authReply(error: unknown): 'WRONGPASS' | 'NOAUTH' | undefined {
  const word = error instanceof Error ? error.message.split(' ')[0] : undefined;
  return word === 'WRONGPASS' || word === 'NOAUTH' ? word : undefined;
}

function warnOnce(url: string, readiness: RedisReadiness, message: string): void {
  if (warned.has(url)) return;
  warned.add(url);
  (readiness.warn ?? ((text) => process.stderr.write(`bulkorder: WARNING: ${text}\n`)))(message);
}

// Once per process and URL: every command and worker connection checks, the warning is said once.
const warned = new Set<string>();

/** A Redis URL with any password replaced, fit for messages and logs. */
export function redactUrl(url: string): string {
  return maskPassword(url);
}

/** Deletes every key under `prefix:` (SCAN in pages, never KEYS). For the demo's own namespace and tests. */
export async function deleteKeysUnder(redis: RedisClient, prefix: string): Promise<number> {
  // A cluster's keys are spread over its masters: SCAN each one.
  if (redis instanceof ioredis().Cluster) {
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
