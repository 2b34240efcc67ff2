import { redisPrefix, type Config } from '../config.js';
import type { Services } from '../services.js';
import type { ParkedKind } from '../keyspace.js';
import { ParkedStore } from '../deadLetter/parkedStore.js';

/** What `dead-letters` and `review` work on: orders, or with `--accounts` employee accounts. */
export interface ParkedTarget {
  services: Services;
  /** The dead letters or held records of that kind of record. */
  store: ParkedStore;
  /** Job name a requeued record is added under. */
  jobName: string;
  /** `order` or `account`, for messages. */
  noun: string;
}

/**
 * Opens the queue, ledger and batches of orders, or of employee accounts (their own keyspace and
 * queue). The parked records of both have one shape, so everything else is shared.
 */
export async function openParkedTarget(config: Config, accounts: boolean, kind: ParkedKind): Promise<ParkedTarget> {
  const target = await openTarget(config, accounts);
  return { ...target, store: new ParkedStore(target.services.redis, target.services.keys, target.services.ledger, kind) };
}

async function openTarget(config: Config, accounts: boolean): Promise<Omit<ParkedTarget, 'store'>> {
  if (accounts) {
    const [{ openAccountServices }, { REGISTER_ACCOUNT }] = await Promise.all([import('../accounts/accountServices.js'), import('../accounts/accountJob.js')]);
    return { services: (await openAccountServices(config)) as unknown as Services, jobName: REGISTER_ACCOUNT, noun: 'account' };
  }
  const [{ openServices }, { DELIVER_ORDER }] = await Promise.all([import('../services.js'), import('../../jobs/deliverOrder.js')]);
  return { services: await openServices({ redisUrl: config.redisUrl, prefix: redisPrefix(config), delivery: config.delivery }), jobName: DELIVER_ORDER, noun: 'order' };
}
