/**
 * The shared token in Redis: one hash per API and credentials, expiring with the token (a TTL:
 * Redis's clock, which each reader turns into its own, so hosts whose clocks differ agree), a
 * refresh lock owned by one process, and a short-lived failure note so that waiting processes
 * learn of a failed refresh at once instead of each hammering a broken token endpoint.
 */
import type { RedisClient } from '../redis.js';
import { InfrastructureError } from '../errors.js';
import { defineScripts } from '../lua/defineScripts.js';
import type { AccessToken } from './tokenEndpoint.js';

export interface TokenStore {
  read(): Promise<AccessToken | undefined>;
  write(token: AccessToken): Promise<void>;
  /** SET NX PX: true when this owner now holds the refresh lock. */
  tryLock(owner: string, ttlMs: number): Promise<boolean>;
  extendLock(owner: string, ttlMs: number): Promise<boolean>;
  unlock(owner: string): Promise<void>;
  /** Who holds the refresh lock now, if anyone. */
  lockOwner(): Promise<string | undefined>;
  /** Deletes the shared token when its id is `tokenId`; true when it did. */
  invalidate(tokenId: string): Promise<boolean>;
  /** Notes a failed refresh for `ttlMs`, so the processes that waited for it fail fast with the same reason. */
  noteFailure(failure: RefreshFailure, ttlMs: number): Promise<void>;
  recentFailure(): Promise<RefreshFailure | undefined>;
}

/** What the lock holder saw go wrong; `owner` names the refresh attempt. Never holds secrets. */
export interface RefreshFailure {
  owner: string;
  code: string;
  message: string;
  exitCode: number;
}

/** A TokenStore at `key` (and `key:lock`, `key:failure`) in the injected Redis. */
export function createRedisTokenStore(redis: RedisClient, key: string): TokenStore {
  const lockKey = `${key}:lock`;
  const failureKey = `${key}:failure`;
  defineScripts(redis);
  return {
    read: () =>
      guard(async () => {
        const replies = (await redis.multi().hgetall(key).pttl(key).exec()) ?? [];
        const fields = (replies[0]?.[1] ?? {}) as Record<string, string>;
        const ttlMs = Number(replies[1]?.[1] ?? -2);
        // What is left of it in this host's time: the writer's clock may be minutes off this one's.
        const expiresAt = ttlMs > 0 ? Date.now() + ttlMs : Number.NaN;
        const lifetimeMs = Number(fields.lifetimeMs);
        if (
          fields.value === undefined ||
          fields.id === undefined ||
          !Number.isFinite(expiresAt) ||
          !Number.isFinite(lifetimeMs)
        )
          return undefined;
        return { value: fields.value, id: fields.id, expiresAt, lifetimeMs };
      }),
    write: (token) =>
      guard(async () => {
        await redis
          .multi()
          .hset(key, {
            value: token.value,
            id: token.id,
            expiresAt: String(token.expiresAt),
            lifetimeMs: String(token.lifetimeMs),
          })
          // What is left in this host's time, as a TTL: a PEXPIREAT would be read on Redis's clock.
          .pexpire(key, Math.max(1, token.expiresAt - Date.now()))
          .del(failureKey)
          .exec();
      }),
    tryLock: (owner, ttlMs) => guard(async () => (await redis.set(lockKey, owner, 'PX', ttlMs, 'NX')) === 'OK'),
    // Compare-and-expire, compare-and-delete: only the owner extends or releases its lock.
    extendLock: (owner, ttlMs) => guard(async () => (await redis.bulkorderExtendIfOwner(lockKey, owner, ttlMs)) === 1),
    unlock: (owner) =>
      guard(async () => {
        await redis.bulkorderDeleteIfOwner(lockKey, owner);
      }),
    lockOwner: () => guard(async () => (await redis.get(lockKey)) ?? undefined),
    // Only the token that failed: a newer one stays.
    invalidate: (tokenId) => guard(async () => (await redis.bulkorderInvalidateToken(key, tokenId)) === 1),
    noteFailure: (failure, ttlMs) =>
      guard(async () => {
        await redis.set(failureKey, JSON.stringify(failure), 'PX', ttlMs);
      }),
    recentFailure: () =>
      guard(async () => {
        const text = await redis.get(failureKey);
        return text === null ? undefined : (JSON.parse(text) as RefreshFailure);
      }),
  };
}

async function guard<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    // No `cause`: ioredis errors carry the command's arguments, and HSET's include the token.
    throw new InfrastructureError(
      'REDIS_UNAVAILABLE',
      `the shared token cache in Redis failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
