/** What one API's calls and keys need from the configuration: its settings, its target and its Redis namespace. */
import { ConfigError } from '../errors.js';
import { targetId } from '../target.js';
import type { ApiName, ApiSettings, Config } from './configTypes.js';

/** The settings one API needs; throws ConfigError naming the first missing variable. */
export function requireApi(config: Config, api: ApiName): ApiSettings {
  if (config.baseUrl === undefined)
    throw new ConfigError('BULKORDER_BASE_URL', 'is required to call the API ({base_url})');
  if (config.userAgent === undefined)
    throw new ConfigError('BULKORDER_USER_AGENT', 'is required: <brand>-<CompanyName>, e.g. Acme-AcmeTradingBV');
  const credentials = requireCredentials(config, api);
  return Object.freeze({
    api,
    env: config.env,
    apiBaseUrl: apiBaseUrl(config.baseUrl, api),
    tokenUrl: `${config.authUrl ?? config.baseUrl}/oauth2/token`,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    userAgent: config.userAgent,
    tokenAuth: config.tokenAuth,
    http: config.http,
    responseFields: config.responseFields,
    ambiguousStatuses: config.ambiguousStatuses,
    idempotencyHeader: config.idempotencyHeader,
  });
}

/**
 * The namespace of every Redis key of one target: `<BULKORDER_REDIS_PREFIX>:<env>:<id>`, where the
 * id hashes the environment, the API's base URL and the client id (src/target.ts `targetId`). The
 * orders' ledger, queue and batches use the Business API's; employee accounts (`<prefix>:accounts`)
 * the Cafetariaplan API's. On a Redis Cluster the whole prefix is a hash tag (`{bulkorder:<env>:<id>}`).
 * Throws ConfigError when the URL or client id is missing: a keyspace
 * guessed without them could answer for another API.
 */
export function redisPrefix(
  config: Pick<Config, 'env' | 'redisKeyPrefix' | 'baseUrl' | 'credentials'> &
    Partial<Pick<Config, 'redisClusterNodes'>>,
  api: ApiName = 'business',
): string {
  if (config.baseUrl === undefined)
    throw new ConfigError(
      'BULKORDER_BASE_URL',
      'is required: what Redis keeps (ledger, queue, batches) belongs to the API it is sent to',
    );
  const credentials = requireCredentials(config, api, ': its Redis keys are kept per client');
  const prefix = `${config.redisKeyPrefix}:${config.env}:${targetId(config.env, apiBaseUrl(config.baseUrl, api), credentials.clientId)}`;
  // On a Redis Cluster a hash tag: BullMQ's scripts and ours touch several keys at once, which a cluster
  // allows only within one slot; each environment and target (src/keyspace.ts subPrefix: and kind) gets its own.
  return (config.redisClusterNodes?.length ?? 0) > 0 ? `{${prefix}}` : prefix;
}

/** Which API one kind's records go to (environment, base URL, client id): what src/target.ts `targetId` hashes. */
export function apiTarget(
  config: Pick<Config, 'env' | 'baseUrl' | 'credentials'>,
  api: ApiName = 'business',
): { env: string; apiBaseUrl: string; clientId: string } {
  if (config.baseUrl === undefined)
    throw new ConfigError('BULKORDER_BASE_URL', 'is required: the records go to the API it names');
  const credentials = requireCredentials(config, api);
  return { env: config.env, apiBaseUrl: apiBaseUrl(config.baseUrl, api), clientId: credentials.clientId };
}

/** One API's client credentials; throws ConfigError naming its client id variable, `why` after the usual words. */
function requireCredentials(
  config: Pick<Config, 'credentials'>,
  api: ApiName,
  why = '',
): NonNullable<Config['credentials'][ApiName]> {
  const credentials = config.credentials[api];
  if (credentials !== undefined) return credentials;
  const infix = api === 'business' ? 'BUSINESS' : 'CAFETARIAPLAN';
  throw new ConfigError(
    `BULKORDER_${infix}_CLIENT_ID`,
    `is required for the ${api} API (with BULKORDER_${infix}_CLIENT_SECRET)${why}`,
  );
}

function apiBaseUrl(baseUrl: string, api: ApiName): string {
  return `${baseUrl}/${api === 'business' ? 'business-api' : 'cafetariaplan-api'}`;
}
