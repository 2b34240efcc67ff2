/**
 * Wires the token endpoint and the shared cache for one API from its settings: the usual
 * way to get a TokenProvider, so callers need not know the cache key or the fetch options.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { ApiSettings } from '../config.js';
import type { Logger } from '../logger.js';
import type { HttpTransport } from './httpTransport.js';
import { fetchAccessToken, type TokenEndpointOptions } from './tokenEndpoint.js';
import { createTokenProvider, type TokenProvider, type TokenProviderOptions } from './tokenProvider.js';

export interface ApiTokenProviderDeps {
  transport: HttpTransport;
  logger: Logger;
  /** Share the token across processes (workers); omit for one-shot commands. */
  redis?: RedisClient;
  /** `redisPrefix(config, api)` (the target), required with `redis`. */
  keyPrefix?: string;
  /** Overrides of the endpoint's retry policy (attempts, delays). */
  endpoint?: Pick<TokenEndpointOptions, 'attempts' | 'baseDelayMs' | 'maxDelayMs' | 'requestDeadlineMs'>;
  /** Told of every request to the token endpoint (not cache hits), e.g. for metrics. */
  onTokenRequest?(result: 'ok' | 'failed', error?: unknown): void;
  /** Overrides of the cache policy (margins, lock, waits). */
  cache?: Omit<TokenProviderOptions, 'api' | 'fetchToken' | 'logger' | 'redis' | 'keyPrefix' | 'credentialsId'>;
}

/**
 * A TokenProvider for `settings.api`, cached per credentials: token URL, client id and secret. The
 * secret is part of the key so that a wrong secret never reuses the token fetched with the right
 * one (it must be refused by the token endpoint, as a person checking it expects).
 */
export function createApiTokenProvider(settings: ApiSettings, deps: ApiTokenProviderDeps): TokenProvider {
  const endpoint: TokenEndpointOptions = {
    api: settings.api,
    tokenUrl: settings.tokenUrl,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    userAgent: settings.userAgent,
    tokenAuth: settings.tokenAuth,
    transport: deps.transport,
    logger: deps.logger,
    // One clock for the token's expiry and the cache's freshness (a test's clock reaches both).
    ...(deps.cache?.now === undefined ? {} : { now: deps.cache.now }),
    ...deps.endpoint,
  };
  const report = deps.onTokenRequest;
  return createTokenProvider({
    ...deps.cache,
    api: settings.api,
    fetchToken:
      report === undefined ? () => fetchAccessToken(endpoint) : () => observed(fetchAccessToken(endpoint), report),
    logger: deps.logger,
    ...(deps.redis === undefined ? {} : { redis: deps.redis, keyPrefix: deps.keyPrefix }),
    credentialsId: credentialsId(settings),
  });
}

async function observed<T>(
  request: Promise<T>,
  report: NonNullable<ApiTokenProviderDeps['onTokenRequest']>,
): Promise<T> {
  try {
    const token = await request;
    report('ok');
    return token;
  } catch (error) {
    report('failed', error);
    throw error;
  }
}

/**
 * 12 hex digits of a SHA-256 over token URL, client id and secret: a cache key, not a secret store
 * (48 bits of a hash of a long random secret, mixed with the rest, tell nothing about it).
 */
function credentialsId(settings: Pick<ApiSettings, 'tokenUrl' | 'clientId' | 'clientSecret'>): string {
  return createHash('sha256')
    .update(`${settings.tokenUrl}\n${settings.clientId}\n${settings.clientSecret.reveal()}`)
    .digest('hex')
    .slice(0, 12);
}
