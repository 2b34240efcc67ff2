/**
 * One access token per API for every worker: single-flight inside a process, and across
 * processes and hosts through Redis (the first to need a refresh takes a lock and fetches;
 * the others wait for its result). The target is one token request per token lifetime.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../redis.js';
import type { ApiName } from '../config.js';
import { BulkorderError, ExitCode, InfrastructureError, isBulkorderError } from '../errors.js';
import { passedOn } from '../errorCodes.js';
import type { Logger } from '../logger.js';
import { createRedisTokenStore, type RefreshFailure, type TokenStore } from './redisTokenStore.js';
import type { AccessToken } from './tokenEndpoint.js';

const SECOND = 1000;

export interface TokenProvider {
  /** A token valid for at least the refresh margin. Throws TokenRefusedError or InfrastructureError. */
  getToken(): Promise<AccessToken>;
  /** After a 401: forget `token` here and in Redis, but only if it is still the current one. */
  invalidate(token: AccessToken): Promise<void>;
}

export interface TokenProviderOptions {
  api: ApiName;
  /** Fetches a new token from the endpoint (fetchAccessToken with the API's settings). */
  fetchToken: () => Promise<AccessToken>;
  logger: Logger;
  /** Shares the token across processes; without it the token is shared within this process only. */
  redis?: RedisClient;
  /** Redis key namespace, `redisPrefix(config, api)` (the target); required with `redis`. */
  keyPrefix?: string;
  /** Separates caches of different credentials for the same API (apiTokenProvider: a hash of token URL, client id and secret). */
  credentialsId?: string;
  /** Refresh this fraction of the lifetime before expiry; default 0.01 (36 s of an hour, 50 ms of 5 s). */
  refreshMarginRatio?: number;
  /** Floor of the margin, so in-flight requests do not race expiry; default 25 ms. */
  minRefreshMarginMs?: number;
  /** Ceiling of the margin; default 60 s. */
  maxRefreshMarginMs?: number;
  /** Refresh lock lifetime, renewed while the holder fetches; default 10 s. */
  lockTtlMs?: number;
  /** How often waiters look for the holder's result; default 50 ms (with jitter). */
  pollIntervalMs?: number;
  /** Longest wait for another process's refresh; default 90 s (outlasts its 4 attempts of up to 15 s each). */
  waitTimeoutMs?: number;
  /** How long a failed refresh is remembered, so waiters fail fast; default 2 s. */
  failureMemoryMs?: number;
  now?: () => number;
}

/** Creates a TokenProvider; see TokenProviderOptions for the defaults. */
export function createTokenProvider(options: TokenProviderOptions): TokenProvider {
  const now = options.now ?? Date.now;
  const ratio = options.refreshMarginRatio ?? 0.01;
  const minMargin = options.minRefreshMarginMs ?? 25;
  const maxMargin = options.maxRefreshMarginMs ?? 60 * SECOND;
  const lockTtlMs = options.lockTtlMs ?? 10 * SECOND;
  const pollMs = options.pollIntervalMs ?? 50;
  const waitTimeoutMs = options.waitTimeoutMs ?? 90 * SECOND;
  const failureMemoryMs = options.failureMemoryMs ?? 2 * SECOND;
  const logger = options.logger.child({ api: options.api });
  const store = sharedStoreOf(options);

  let current: AccessToken | undefined;
  let inflight: Promise<AccessToken> | undefined;

  // The margin scales with the lifetime: a fixed minute would refresh a 5 s token constantly.
  const isFresh = (token: AccessToken | undefined): token is AccessToken =>
    token !== undefined && now() < token.expiresAt - Math.min(maxMargin, Math.max(minMargin, token.lifetimeMs * ratio));

  async function fetchAndLog(): Promise<AccessToken> {
    const token = await options.fetchToken();
    logger.info({ tokenId: token.id, lifetimeMs: token.lifetimeMs }, 'new access token');
    return token;
  }

  async function fetchHoldingLock(shared: TokenStore, owner: string): Promise<AccessToken> {
    // Renew the lock while fetching: retries with backoff can outlast one lock lifetime.
    const renew = setInterval(() => void shared.extendLock(owner, lockTtlMs).catch(() => undefined), lockTtlMs / 3);
    try {
      // Someone may have stored a token between our read and our lock.
      const stored = await shared.read();
      if (isFresh(stored)) return stored;
      const token = await fetchAndLog();
      await shared.write(token);
      return token;
    } catch (error) {
      await shared.noteFailure(refreshFailure(error, owner), failureMemoryMs).catch(() => undefined);
      throw error;
    } finally {
      clearInterval(renew);
      await shared.unlock(owner).catch(() => undefined);
    }
  }

  async function obtainShared(shared: TokenStore): Promise<AccessToken> {
    const owner = randomUUID();
    const giveUpAt = now() + waitTimeoutMs;
    // Lock holders we waited for: if one of them failed, we fail with its reason rather than
    // each waiter retrying a broken token endpoint in turn. A failure we did not wait for is ignored.
    const waitedFor = new Set<string>();
    for (;;) {
      const stored = await shared.read();
      if (isFresh(stored)) return stored;
      const failure = await shared.recentFailure();
      if (failure !== undefined && waitedFor.has(failure.owner)) {
        throw new BulkorderError(passedOn(failure.code), failure.message, { exitCode: failure.exitCode as ExitCode });
      }
      if (await shared.tryLock(owner, lockTtlMs)) return fetchHoldingLock(shared, owner);
      const holder = await shared.lockOwner();
      if (holder !== undefined) waitedFor.add(holder);
      if (now() > giveUpAt) {
        throw new InfrastructureError(
          'TOKEN_WAIT_TIMEOUT',
          `waited ${waitTimeoutMs} ms for another process to refresh the ${options.api} API token`,
        );
      }
      await sleep(pollMs / 2 + Math.random() * pollMs);
    }
  }

  return {
    getToken() {
      if (isFresh(current)) return Promise.resolve(current);
      inflight ??= (store === undefined ? fetchAndLog() : obtainShared(store))
        .then((token) => {
          current = token;
          return token;
        })
        .finally(() => {
          inflight = undefined;
        });
      return inflight;
    },
    async invalidate(token) {
      if (current?.id === token.id) current = undefined;
      const dropped = store === undefined ? false : await store.invalidate(token.id);
      logger.info({ tokenId: token.id, droppedShared: dropped }, 'access token refused by the API; dropped');
    },
  };
}

/** The store that shares the token across processes (Redis), or undefined: shared within this process only. */
function sharedStoreOf(options: TokenProviderOptions): TokenStore | undefined {
  if (options.redis === undefined) return undefined;
  if (options.keyPrefix === undefined) throw new Error('createTokenProvider: keyPrefix is required with redis');
  return createRedisTokenStore(
    options.redis,
    `${options.keyPrefix}:token:${options.api}:${options.credentialsId ?? 'default'}`,
  );
}

/** What waiters learn of a failed refresh: its code and exit code, TOKEN_REFRESH_FAILED for an unexpected error. */
function refreshFailure(error: unknown, owner: string): RefreshFailure {
  return isBulkorderError(error)
    ? { owner, code: error.code, message: error.message, exitCode: error.exitCode }
    : {
        owner,
        code: 'TOKEN_REFRESH_FAILED',
        message: error instanceof Error ? error.message : String(error),
        exitCode: ExitCode.infrastructure,
      };
}
