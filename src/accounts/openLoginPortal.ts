import { redisPrefix, requireApi, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { Ledger } from '../ledger/ledger.js';
import { ensureNamespaceMarker } from '../ledger/namespaceMarker.js';
import { bulkorderVersion } from '../paths.js';
import { keyspace } from '../keyspace.js';
import { assertRedisReady, createRedis } from '../redis.js';
import { createApiTokenProvider } from '../delivery/apiTokenProvider.js';
import { createCafetariaplanClient } from '../delivery/cafetariaplanClient.js';
import { createHttpTransport } from '../delivery/httpTransport.js';
import { ACCOUNTS } from '../kinds/accounts.js';
import { CustomerDirectory } from './customerDirectory.js';
import { loginUrlFor, type LoginTarget } from './loginUrlFor.js';

/** A long-lived login-URL source for an employer's portal; `close()` ends its connections. */
export interface LoginPortal {
  loginUrlFor(target: LoginTarget): Promise<string>;
  close(): Promise<void>;
}

/**
 * Everything loginUrlFor needs, built once from the configuration: the Cafetariaplan client
 * with the token shared through Redis (so a busy portal and the workers fetch one token), and
 * the environment's accounts ledger as the customerId directory.
 *
 * ```ts
 * const portal = await openLoginPortal(loadConfig(), logger);
 * response.redirect(await portal.loginUrlFor({ email, companyId }));
 * ```
 */
export async function openLoginPortal(
  config: Config,
  logger: Logger,
  options: { prefix?: string } = {},
): Promise<LoginPortal> {
  const settings = requireApi(config, 'cafetariaplan');
  const prefix = options.prefix ?? redisPrefix(config, 'cafetariaplan');
  const redis = createRedis(config, 'producer');
  const keys = keyspace(ACCOUNTS.prefix(prefix));
  try {
    await assertRedisReady(redis, config.redisUrl, {
      requirePersistence: config.delivery.requirePersistentRedis,
      requireVerifiable: config.delivery.requireVerifiableRedis,
    });
    // It reads the accounts' ledger: not one a newer bulkorder wrote (README "Deployment").
    await ensureNamespaceMarker(redis, keys, { processVersion: bulkorderVersion() });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const transport = createHttpTransport(settings.http);
  const tokenProvider = createApiTokenProvider(settings, { transport, logger, redis, keyPrefix: prefix });
  const client = createCafetariaplanClient(settings, { transport, tokenProvider, logger });
  // The accounts kind names the keyspace, queue and retention its workers use (src/kinds/accounts.ts).
  const ledger = new Ledger(redis, keys, {
    queueName: ACCOUNTS.queueName,
    retentionMs: ACCOUNTS.retentionMs(config.delivery),
  });
  const directory = new CustomerDirectory(ledger);
  return {
    loginUrlFor: (target) => loginUrlFor(target, { login: (customerId) => client.login(customerId), directory }),
    async close() {
      await transport.close();
      redis.disconnect();
    },
  };
}
