import type { Config } from '../src/config.js';
import { requireApi } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createRedis } from '../src/redis.js';
import { createHttpTransport } from '../src/delivery/httpTransport.js';
import { createApiTokenProvider } from '../src/delivery/apiTokenProvider.js';
import { createCafetariaplanClient, type AccountOutcome } from '../src/delivery/cafetariaplanClient.js';
import type { Outcome } from '../src/delivery/classifyOutcome.js';
import type { DeliveryStartOptions } from './deliveryWorker.js';
import type { AccountPayload } from '../src/accounts/accountColumns.js';
import { ACCOUNT_WORDING, ACCOUNTS_QUEUE, accountsPrefix } from '../src/accounts/accountJob.js';
import { observers, startDeliveryWorker, tokenObserver, type DeliveryWorker } from './deliveryWorker.js';

/**
 * The account-registration worker: the same BullMQ worker, ledger, retries, dead letters,
 * held records and circuit breaker as order delivery, over the `accounts` queue in the
 * accounts keyspace, calling the Cafetariaplan API with its own credentials and shared token.
 * Started by `bulkorder worker` when Cafetariaplan credentials are configured.
 */
export async function startAccountDelivery(config: Config, logger: Logger, options: DeliveryStartOptions): Promise<DeliveryWorker<AccountPayload>> {
  const settings = requireApi(config, 'cafetariaplan');
  const redis = createRedis(config.redisUrl, 'worker');
  const transport = createHttpTransport({ ...settings.http, connectionsPerOrigin: options.delivery.concurrency });
  // The token lives beside the Business API's, under the environment's prefix (one per API and credentials).
  const tokenProvider = createApiTokenProvider(settings, { transport, logger, redis, keyPrefix: options.prefix, ...tokenObserver(options, 'cafetariaplan') });
  const client = createCafetariaplanClient(settings, { transport, tokenProvider, logger });
  const accountLogger = logger.child({ api: 'cafetariaplan' });
  const worker = await startDeliveryWorker<AccountPayload>({
    redisUrl: config.redisUrl,
    prefix: accountsPrefix(options.prefix),
    queueName: ACCOUNTS_QUEUE,
    // The ledger entry holds the customerId that login needs, so it outlives order retention.
    delivery: { ...options.delivery, ledgerRetentionMs: options.delivery.accountRetentionMs },
    send: async (account) => asDeliveryOutcome(await client.createAccount(account)),
    wording: ACCOUNT_WORDING,
    requestDeadlineMs: settings.http.deadlineMs,
    logger: accountLogger,
    redis,
    ...observers(options, 'cafetariaplan'),
  });
  return {
    worker: worker.worker,
    async close() {
      await worker.close();
      await transport.close();
      redis.disconnect();
    },
  };
}

/** The ledger keeps the new account's customerId as its remote id: that entry is the customerId mapping. */
export function asDeliveryOutcome(outcome: AccountOutcome): Outcome {
  if (outcome.kind !== 'delivered') return outcome;
  return { kind: 'delivered', status: outcome.status, body: outcome.body, remoteId: outcome.customerId };
}
