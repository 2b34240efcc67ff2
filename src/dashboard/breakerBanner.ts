import type { BreakerView } from '../worker/breakerView.js';
import type { PauseRecord } from '../services/deliveryControl.js';
import { h, type Safe } from './html.js';
import { time } from './layout.js';

/**
 * What the banner shows of the breaker: the breaker's own view (its reason like "500 x61, 502 x60
 * in 60 s", next trial, degraded share) maps onto it here and nowhere else.
 */
export interface BreakerBannerView {
  state: 'closed' | 'degraded' | 'open' | 'halfOpen';
  /** What was seen, in words: "500 x61, 502 x60 in 60 s", or the signature that tripped it. */
  reason: string | undefined;
  since: number | undefined;
  nextTrialAt: number | undefined;
  /** Share of failed attempts in the window while closed (0..1), when the breaker tells it. */
  degradedShare?: number;
  overdue: boolean;
  /** Jobs waiting or delayed behind it, and dead letters it sends back when it closes. */
  waiting: number | undefined;
  burst: number;
  pausedBy: PauseRecord | undefined;
}

/** The breaker's view (readBreakerView) as the banner's: closed but failing under the threshold is `degraded`. */
export function bannerView(
  view: BreakerView,
  extra: Pick<BreakerBannerView, 'waiting' | 'burst' | 'pausedBy'>,
): BreakerBannerView {
  const breaker = view.status;
  if (view.state === 'closed' && view.degraded !== undefined) {
    return {
      state: 'degraded',
      reason: view.degraded.text,
      degradedShare: view.degraded.share,
      since: undefined,
      nextTrialAt: undefined,
      overdue: false,
      ...extra,
    };
  }
  return {
    state: breaker.state,
    reason: breaker.reason ?? breaker.signature,
    since: breaker.since,
    nextTrialAt: view.nextTrialAt,
    overdue: breaker.overdue,
    ...extra,
  };
}

/** The breaker's state, what it saw, its next trial and what waits; a person's pause above it. */
export function breakerBanner(view: BreakerBannerView, timeZone: string): Safe {
  const pause =
    view.pausedBy === undefined
      ? h``
      : h`<div class="breaker" data-test="paused">Delivery paused by ${view.pausedBy.by} since ${time(view.pausedBy.at, timeZone)}: <code>bulkorder resume</code> resumes it.</div>`;
  const waits = [
    view.waiting === undefined ? '' : `${view.waiting} jobs waiting or delayed`,
    view.burst === 0 ? '' : `${view.burst} dead letters go back when it closes`,
  ].filter((s) => s !== '');
  const what = waits.length === 0 ? h`` : h` Waiting: ${waits.join('; ')}.`;
  if (view.state === 'closed')
    return h`${pause}<p class="ok" data-test="breaker">Circuit breaker closed: delivering.</p>`;
  if (view.state === 'degraded') {
    const share = view.degradedShare === undefined ? '' : `: ${Math.round(view.degradedShare * 100)}% failing`;
    return h`${pause}<div class="breaker" data-test="breaker"><strong>${view.reason ?? `API failing${share}`}</strong> (the breaker is still closed).${what}</div>`;
  }
  const next = view.nextTrialAt === undefined ? h`` : h` Next trial calls at ${time(view.nextTrialAt, timeZone)}.`;
  const since = view.since === undefined ? h`` : h` since ${time(view.since, timeZone)}`;
  return h`${pause}<div class="breaker" data-test="breaker"><strong>Circuit breaker ${view.state === 'open' ? 'OPEN' : 'HALF-OPEN (trial calls)'}${since}</strong>: ${view.reason ?? ''}.${next}${what}${view.overdue ? h` <strong>Open past its alert limit: check the API.</strong>` : h``}</div>`;
}
