import type { Redis } from 'ioredis';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import type { BreakerTrip } from '../worker/circuitBreaker.js';
import type { Notifier } from './notifier.js';

export interface BreakerWatchOptions {
  redis: Redis;
  keys: Keyspace;
  env: string;
  notifier: Notifier;
  logger: Logger;
  dashboardUrl?: string;
  /** How often the trip record is read; default 5 s. */
  pollMs?: number;
  /** A breaker open this long is announced again as still open; default 30 min. */
  stillOpenAfterMs?: number;
}

/**
 * Announces the circuit breaker opening, closing (`bulkorder resume`) and staying open past
 * `stillOpenAfterMs`, by watching its trip record in Redis: the breaker itself stays as it is.
 * Each announcement is claimed with SET NX under the trip's time, so one of many workers sends it.
 */
export function startBreakerWatch(options: BreakerWatchOptions): { close(): void } {
  let open: BreakerTrip | undefined;
  const stillOpenAfterMs = options.stillOpenAfterMs ?? 30 * 60_000;
  const once = async (trip: BreakerTrip, what: string): Promise<boolean> =>
    (await options.redis.set(`${options.keys.breakerTrip}:notified:${trip.at}:${what}`, '1', 'PX', 7 * 24 * 3600_000, 'NX')) === 'OK';
  const send = (event: 'breaker-opened' | 'breaker-closed' | 'breaker-still-open', trip: BreakerTrip, text: string) =>
    options.notifier.notify({
      event,
      env: options.env,
      text: options.dashboardUrl === undefined ? text : `${text}\n${options.dashboardUrl}/`,
      at: new Date().toISOString(),
      reason: trip.reason,
      ...(options.dashboardUrl === undefined ? {} : { dashboardUrl: `${options.dashboardUrl}/` }),
    });
  const poll = async (): Promise<void> => {
    const raw = await options.redis.get(options.keys.breakerTrip);
    const trip = raw === null ? undefined : (JSON.parse(raw) as BreakerTrip);
    if (trip !== undefined && (await once(trip, 'opened'))) await send('breaker-opened', trip, `Circuit breaker OPEN (${options.env}): delivery paused. ${trip.reason}`);
    if (trip !== undefined && Date.now() - trip.at > stillOpenAfterMs && (await once(trip, 'still-open'))) {
      await send('breaker-still-open', trip, `Circuit breaker still open after ${Math.round((Date.now() - trip.at) / 60_000)} min (${options.env}): delivery is paused until \`bulkorder resume\`.`);
    }
    if (trip === undefined && open !== undefined && (await once(open, 'closed'))) await send('breaker-closed', open, `Circuit breaker closed (${options.env}): delivery resumed.`);
    open = trip;
  };
  const timer = setInterval(() => void poll().catch((error: unknown) => options.logger.debug({ err: error }, 'breaker watch: Redis not answering')), options.pollMs ?? 5_000);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
