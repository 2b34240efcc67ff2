import { redisPrefix, type Config } from '../config.js';
import { openServices, type Services } from '../services.js';
import { ACCOUNTS_QUEUE, accountsPrefix, type AccountJobData } from './accountJob.js';

/**
 * The queue, ledger and batch store of employee accounts (their own keyspace, see
 * accountsPrefix), with the accounts' retention. What `openServices` is for orders.
 */
export function openAccountServices(config: Config, options: { prefix?: string } = {}): Promise<Services<AccountJobData>> {
  return openServices<AccountJobData>({
    redisUrl: config.redisUrl,
    prefix: accountsPrefix(options.prefix ?? redisPrefix(config, 'cafetariaplan')),
    queueName: ACCOUNTS_QUEUE,
    delivery: { ...config.delivery, ledgerRetentionMs: config.delivery.accountRetentionMs },
  });
}
