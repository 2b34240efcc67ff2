/**
 * What a Redis says about keeping what it is told: its eviction policy and persistence, read with
 * CONFIG GET, from INFO where CONFIG is refused (managed Redis), and not at all where both are (a
 * least-privilege ACL user: README, "Redis permissions"). src/redis.ts decides with it at start,
 * the worker's guard (src/worker/redisGuard.ts), `status` and the dashboard while running.
 */
import type { Cluster, Redis } from 'ioredis';
import { isCommandRefused } from '../redisErrors.js';

/** One Redis or a Redis Cluster (src/redis.ts RedisClient). */
type RedisClient = Redis | Cluster;

/** Whether Redis persists, and what that was read from (for messages). */
export interface RedisPersistence {
  persistent: boolean;
  evidence: string;
  /** False when CONFIG was refused and INFO persistence was read instead (or neither could be read). */
  verified: boolean;
  /** False when neither CONFIG nor INFO could be read: `persistent` is then a guess (false). */
  known: boolean;
}

/**
 * Reads `appendonly` and `save` with CONFIG GET; where CONFIG is refused (managed Redis), INFO
 * persistence: AOF enabled, or RDB snapshots taken since start, is assumed to mean persistence.
 * Where INFO is refused too (a least-privilege ACL user), nothing is known.
 */
export async function redisPersistence(redis: RedisClient): Promise<RedisPersistence> {
  const appendonly = await configGet(redis, 'appendonly');
  const save = appendonly === undefined ? undefined : await configGet(redis, 'save');
  if (appendonly !== undefined && save !== undefined) {
    const evidence = `appendonly ${appendonly}, save '${save}'`;
    return { persistent: appendonly === 'yes' || save.trim() !== '', evidence, verified: true, known: true };
  }
  const info = await infoSection(redis, 'persistence');
  if (info === undefined)
    return { persistent: false, evidence: 'CONFIG and INFO refused to this user', verified: false, known: false };
  const field = (name: string): string | undefined => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  if (field('aof_enabled') === '1')
    return {
      persistent: true,
      evidence: 'CONFIG refused; INFO persistence: aof_enabled:1',
      verified: false,
      known: true,
    };
  const saves = Number(field('rdb_saves') ?? '0');
  const lastSave = Number(field('rdb_last_bgsave_time_sec') ?? '-1');
  if (saves > 0 || lastSave >= 0) {
    return {
      persistent: true,
      evidence: `CONFIG refused; assumed RDB snapshots are configured, since INFO persistence shows one taken (rdb_saves:${saves})`,
      verified: false,
      known: true,
    };
  }
  return {
    persistent: false,
    evidence: 'CONFIG refused; INFO persistence: aof_enabled:0 and no RDB snapshot taken since start',
    verified: false,
    known: true,
  };
}

/**
 * What may make a Redis lose orders while bulkorder runs, read again and again by the worker's guard
 * (src/worker/redisGuard.ts), `status` and the dashboard: an eviction policy other than `noeviction`,
 * no persistence (neither AOF nor RDB snapshots), or neither knowable because CONFIG is refused
 * (managed Redis; INFO is then read, but a guess is not a proof), or INFO too (nothing is known).
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
  /** False when CONFIG and INFO were both refused: neither eviction nor persistence is known. */
  known: boolean;
  /** False when INFO is refused to this user (BullMQ's version check then has to be skipped). */
  infoAllowed: boolean;
  /** What was read, for messages. */
  evidence: string;
  /** What persistence was read from, for messages. */
  persistenceEvidence: string;
}

/** Reads a Redis's eviction policy and persistence (CONFIG GET, INFO where CONFIG is refused). */
export async function redisRisk(redis: RedisClient): Promise<RedisRisk> {
  let policy = await configGet(redis, 'maxmemory-policy');
  const verifiedPolicy = policy !== undefined;
  let infoAllowed = true;
  if (policy === undefined) {
    const memory = await infoSection(redis, 'memory');
    infoAllowed = memory !== undefined;
    policy = memory === undefined ? undefined : /^maxmemory_policy:(\S+)/m.exec(memory)?.[1];
  } else if ((await infoSection(redis, 'server')) === undefined) infoAllowed = false;
  const persistence = await redisPersistence(redis);
  const known = verifiedPolicy || infoAllowed;
  return {
    evicting: policy !== undefined && policy !== 'noeviction',
    policy,
    persistent: persistence.persistent,
    verified: verifiedPolicy && persistence.verified,
    known,
    infoAllowed,
    evidence: known ? `maxmemory-policy ${policy ?? 'unknown'}; ${persistence.evidence}` : persistence.evidence,
    persistenceEvidence: persistence.evidence,
  };
}

/** CONFIG GET of one parameter; undefined when CONFIG is refused to this user (or renamed away). */
async function configGet(redis: RedisClient, name: string): Promise<string | undefined> {
  try {
    return (await redis.config('GET', name))[1];
  } catch (error) {
    if (isCommandRefused(error)) return undefined;
    throw error;
  }
}

/** One INFO section; undefined when INFO is refused to this user. */
async function infoSection(redis: RedisClient, section: string): Promise<string | undefined> {
  try {
    return await redis.info(section);
  } catch (error) {
    if (isCommandRefused(error)) return undefined;
    throw error;
  }
}
