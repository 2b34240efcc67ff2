import type { Config } from '../src/config.js';
import { requireApi } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createRedis } from '../src/redis.js';
import { createHttpTransport } from '../src/delivery/httpTransport.js';
import { createApiTokenProvider } from '../src/delivery/apiTokenProvider.js';
import { createBusinessApiClient } from '../src/delivery/businessApiClient.js';
import type { DeliveryStartOptions } from './deliveryWorker.js';
import type { OrderPayload } from '../src/ingest/types.js';
import { observers, startDeliveryWorker, tokenObserver, type DeliveryWorker } from './deliveryWorker.js';
import { startScheduledImportWorker } from './scheduledImport.js';

/**
 * Everything a Business API delivery worker needs, built from the configuration: the shared
 * token (Redis), the HTTP client and the BullMQ worker. Used by `bulkorder worker` and the demo.
 */
export async function startBusinessDelivery(config: Config, logger: Logger, options: DeliveryStartOptions): Promise<DeliveryWorker> {
  const settings = requireApi(config, 'business');
  const redis = createRedis(config.redisUrl, 'worker');
  const transport = createHttpTransport({ ...settings.http, connectionsPerOrigin: options.delivery.concurrency });
  const tokenProvider = createApiTokenProvider(settings, { transport, logger, redis, keyPrefix: options.prefix, ...tokenObserver(options, 'business') });
  const client = createBusinessApiClient(settings, { transport, tokenProvider, logger });
  const worker = await startDeliveryWorker<OrderPayload>({
    redisUrl: config.redisUrl,
    prefix: options.prefix,
    delivery: options.delivery,
    send: (payload) => client.createOrder(payload),
    requestDeadlineMs: settings.http.deadlineMs,
    logger,
    redis,
    ...observers(options, 'business'),
  });
  // Every worker process also runs scheduled imports (bulkorder schedule); BullMQ gives each firing to one.
  const scheduled = await startScheduledImportWorker({ redisUrl: config.redisUrl, prefix: options.prefix, env: config.env, delivery: options.delivery, logger, ...(options.onScheduledImport === undefined ? {} : { onResult: options.onScheduledImport }) });
  return {
    worker: worker.worker,
    async close() {
      await scheduled.close();
      await worker.close();
      await transport.close();
      redis.disconnect();
    },
  };
}
