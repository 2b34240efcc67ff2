import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import type { Queue } from 'bullmq';
import type { BreakerSettings } from '../deliverySettings.js';
import { defineScripts } from '../lua/defineScripts.js';
import { readBreakerReport } from '../services/breakerReport.js';
import { claimEvent, notifyWatermark } from './eventClaims.js';
import { breakerNotice } from './breakerNotice.js';
import type { Notifier } from './notifier.js';
import { startPollingWatch, type PollingWatch } from './pollingWatch.js';

export interface BreakerWatchOptions {
  /** One record kind's breaker: its Redis, keys and queue (a Services object fits). */
  services: {
    redis: RedisClient;
    keys: Keyspace;
    queue: Pick<Queue, 'getJobCounts'>;
    env: string;
    kind: { name: string };
  };
  settings: Pick<BreakerSettings, 'windowMs' | 'serverFailingRatio' | 'alertAfterMs'>;
  notifier: Notifier;
  logger: Logger;
  dashboardUrl?: string;
  /** How often the breaker is looked at; default 5 s. */
  pollMs?: number;
}

/**
 * Announces the breaker from its stored state, so every `breaker-opened` gets its `breaker-closed`
 * whoever closed it (a trial, `resume`, the dashboard): the episode announced as opened is kept in
 * Redis until its close is sent. Events are claimed by id (kind + the episode's start), so any
 * number of workers send each once; episodes that began before the watermark are not announced.
 */
export function startBreakerWatch(options: BreakerWatchOptions): PollingWatch {
  const { redis, keys } = options.services;
  const kind = options.services.kind.name;
  const notice = {
    env: options.services.env,
    kind,
    ...(options.dashboardUrl === undefined ? {} : { dashboardUrl: options.dashboardUrl }),
  };
  const checkOnce = async (): Promise<void> => {
    const from = await notifyWatermark(redis, keys);
    const view = await readBreakerReport(options.services, options.settings);
    const episode = await redis.get(keys.notifyBreakerEpisode);
    if (episode !== null && (view.state === 'closed' || String(view.since) !== episode)) {
      if (await claimEvent(redis, keys, `breaker-closed:${kind}:${episode}`)) {
        const closedBy = view.state === 'closed' ? await redis.hget(keys.breaker, 'closedBy') : null;
        // Only if it is still the one closed (deleteIfOwner-1.lua): a new one may have opened meanwhile.
        await defineScripts(redis).bulkorderDeleteIfOwner(keys.notifyBreakerEpisode, episode);
        await options.notifier.notify(
          breakerNotice('breaker-closed', view, {
            ...notice,
            since: Number(episode),
            closedBy: closedBy ?? 'a successful trial call',
          }),
        );
      }
    }
    if (view.state === 'closed' || view.since === undefined || view.since < from) return;
    if (await claimEvent(redis, keys, `breaker-opened:${kind}:${view.since}`)) {
      await redis.set(keys.notifyBreakerEpisode, String(view.since));
      await options.notifier.notify(breakerNotice('breaker-opened', view, { ...notice, since: view.since }));
    }
    if (view.overdue && (await claimEvent(redis, keys, `breaker-still-open:${kind}:${view.since}`))) {
      await options.notifier.notify(breakerNotice('breaker-still-open', view, { ...notice, since: view.since }));
    }
  };
  return startPollingWatch(checkOnce, { logger: options.logger, what: 'the circuit breaker', pollMs: options.pollMs });
}
