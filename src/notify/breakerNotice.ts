import type { BreakerEvent } from '../worker/circuitBreaker.js';
import type { Notifier } from './notifier.js';
import type { NotifyEvent, NotifyEventKind } from './notifyEvent.js';

/**
 * The circuit breaker's transitions worth telling a person: a new episode opening, its end, and
 * an episode open past the alert limit. Reopenings after a failed trial and half-open moments are
 * part of one episode and stay in the log. The breaker reports each transition once across all
 * workers, so no claim is needed here.
 */
const ANNOUNCED: Partial<Record<BreakerEvent['type'], NotifyEventKind>> = {
  opened: 'breaker-opened',
  closed: 'breaker-closed',
  stuck: 'breaker-still-open',
};

/** Builds the `onBreakerEvent` hook that announces the breaker through `notifier`. */
export function breakerAnnouncer(options: { notifier: Notifier; env: string; dashboardUrl?: string }): (event: BreakerEvent) => Promise<void> {
  return async (event) => {
    const kind = ANNOUNCED[event.type];
    if (kind === undefined) return;
    const text = `${headline(event, options.env)}${options.dashboardUrl === undefined ? '' : `\n${options.dashboardUrl}/`}`;
    const notice: NotifyEvent = {
      event: kind,
      env: options.env,
      text,
      at: new Date().toISOString(),
      // The signature (status and code), never the API's message: it may echo an order's values.
      ...(event.status.signature === undefined ? {} : { reason: event.status.signature }),
      ...(options.dashboardUrl === undefined ? {} : { dashboardUrl: `${options.dashboardUrl}/` }),
    };
    await options.notifier.notify(notice);
  };
}

function headline(event: BreakerEvent, env: string): string {
  const cause = event.status.signature === undefined ? '' : ` (${event.status.signature})`;
  switch (event.type) {
    case 'opened':
      return `Circuit breaker OPEN (${env})${cause}: delivery is paused and heals by itself with trial calls.`;
    case 'closed':
      return `Circuit breaker closed (${env}): delivery resumed${event.requeued ? `, ${event.requeued} refused orders sent again` : ''}.`;
    default: {
      const minutes = event.status.since === undefined ? undefined : Math.round((Date.now() - event.status.since) / 60_000);
      return `Circuit breaker still open${minutes === undefined ? '' : ` after ${minutes} min`} (${env})${cause}: check the API, or \`bulkorder pause\` / \`bulkorder resume\`.`;
    }
  }
}
