import type { BreakerReport } from '../services/breakerReport.js';
import type { NotifyEvent } from './notifyEvent.js';

type BreakerEventKind = 'breaker-opened' | 'breaker-closed' | 'breaker-still-open';

/**
 * The notification for one breaker transition: what the breaker saw (its reason and the trip's
 * status and code, never the API's message: it may echo an order's values), the next trial and
 * what waits; on close, who closed it. The id names the kind and the episode's start, so the
 * `breaker-closed` of an episode pairs with its `breaker-opened`.
 */
export function breakerNotice(
  event: BreakerEventKind,
  view: BreakerReport,
  facts: { env: string; kind: string; since: number; closedBy?: string; dashboardUrl?: string; now?: number },
): NotifyEvent {
  const link = facts.dashboardUrl === undefined ? undefined : `${facts.dashboardUrl}/`;
  const where = `${facts.env}${facts.kind === 'orders' ? '' : `, ${facts.kind}`}`;
  const minutes = Math.max(0, Math.round(((facts.now ?? Date.now()) - facts.since) / 60_000));
  const waiting = `${view.waiting.jobs} jobs waiting${view.waiting.burst > 0 ? `, ${view.waiting.burst} dead letters to send again on close` : ''}`;
  const trial = view.state === 'halfOpen' ? 'trial calls are going through now' : `next trial ${iso(view.nextTrialAt)}`;
  const text = {
    'breaker-opened': `Circuit breaker OPEN (${where}): ${view.reason ?? view.signature ?? 'the API is failing'}. Delivery is paused and heals by itself with trial calls: ${trial}; ${waiting}.`,
    'breaker-closed': `Circuit breaker closed (${where}) after ${minutes} min, by ${facts.closedBy ?? 'a successful trial call'}: delivery goes on.`,
    'breaker-still-open': `Circuit breaker still open after ${minutes} min (${where}): ${view.reason ?? view.signature ?? ''}; ${trial}; ${waiting}. Check the API, or \`bulkorder pause\` / \`bulkorder resume\`.`,
  }[event];
  const open = event !== 'breaker-closed';
  return {
    id: `${event}:${facts.kind}:${facts.since}`,
    event,
    env: facts.env,
    kind: facts.kind,
    text: link === undefined ? text : `${text}\n${link}`,
    at: new Date(facts.now ?? Date.now()).toISOString(),
    ...(open && view.reason !== undefined ? { reason: view.reason } : {}),
    ...(open && view.signature !== undefined ? { code: view.signature } : {}),
    ...(open && view.nextTrialAt !== undefined ? { nextTrialAt: new Date(view.nextTrialAt).toISOString() } : {}),
    ...(open ? { waiting: view.waiting } : {}),
    ...(facts.closedBy === undefined ? {} : { closedBy: facts.closedBy }),
    ...(link === undefined ? {} : { dashboardUrl: link }),
  };
}

function iso(at: number | undefined): string {
  return at === undefined ? 'soon' : `at ${new Date(at).toISOString()}`;
}
